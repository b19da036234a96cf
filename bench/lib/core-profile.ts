/**
 * One side of one core benchmark in a process of its own, for `node --cpu-prof`: the profile
 * then holds only that side's work (the bench runs both sides in one process).
 *
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof --conditions=@tidemark/source --import tsx \
 *     bench/lib/core-profile.ts <case> [count]
 *   cases: publish-tidemark, publish-raw (1,000 in flight), replay-tidemark, replay-raw
 *          (whole topic, push ordered consumer), newest-tidemark, newest-raw (replay of the newest
 *          event only). BENCH_SERVERS=2.9 uses /usr/sbin/nats-server.
 * Summarise the profile with `tsx bench/lib/profile-summary.ts <file.cpuprofile>`.
 */
import { connect } from "@nats-io/transport-node";
import { DeliverPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { createSync, findNatsServer } from "@tidemark/server";
import { startBenchNats } from "./nats.js";

const [which = "publish-tidemark", countArg] = process.argv.slice(2);
const count = Number(countArg ?? (which.startsWith("newest") ? 2_000 : 100_000));
const binary = process.env.BENCH_SERVERS === "2.9" ? "/usr/sbin/nats-server" : findNatsServer();
const IN_FLIGHT = 1_000;
const encoder = new TextEncoder();
const item = (n: number) => ({ itemId: `sku-${n % 1000}`, qty: 1 + (n % 7), n });

await using nats = await startBenchNats({ binary });
const sync = createSync({ namespace: "prof", nats: { servers: nats.url } });
const topic = sync.topic<ReturnType<typeof item>>({ id: "prof.events" });
await topic.head();
const nc = await connect({ servers: nats.url, noAsyncTraces: true });
const js = jetstream(nc);
const jsm = await jetstreamManager(nc);
const stream = (await jsm.streams.list().next()).find((s) => s.config.name.startsWith("TMEV_"))!.config.name;

async function windows(n: number, one: (i: number) => Promise<unknown>): Promise<void> {
  for (let done = 0; done < n; done += IN_FLIGHT) await Promise.all(Array.from({ length: IN_FLIGHT }, (_, i) => one(done + i)));
}

async function fill(n: number): Promise<void> {
  await windows(n, (i) => topic.publish({ data: item(i) }));
}

// Filled before the clock starts (the profile includes it: read it off the replay's frames).
if (which.startsWith("replay")) await fill(20_000);
if (which.startsWith("newest")) await fill(1_000);
const started = performance.now();
const cpu = process.cpuUsage();
let ops = count;
switch (which) {
  case "publish-tidemark":
    await windows(count, (i) => topic.publish({ data: item(i) }));
    break;
  case "publish-raw": {
    const twin = (await jsm.streams.info(stream)).config;
    await jsm.streams.add({ ...twin, name: "RAW", description: "raw", subjects: ["raw.>"], republish: { src: "raw.>", dest: "rawlive.>" } });
    await windows(count, (i) => js.publish("raw._", encoder.encode(JSON.stringify(item(i)))));
    break;
  }
  case "replay-tidemark":
  case "replay-raw": {
    ops = 0;
    for (let r = 0; r < count / 20_000; r++) {
      if (which === "replay-tidemark") {
        for await (const e of topic.replay()) ops += e.data.n >= 0 ? 1 : 0;
      } else {
        const messages = await (await js.consumers.getPushConsumer(stream)).consume();
        for await (const m of messages) {
          ops += m.json<{ d: { n: number } }>().d.n >= 0 ? 1 : 0;
          if (m.info.pending === 0) break;
        }
        await messages.close();
      }
    }
    break;
  }
  case "newest-tidemark":
  case "newest-raw": {
    const last = topic.cursorSequence(await topic.head());
    const after = topic.cursorAt(last - 1);
    for (let r = 0; r < count; r++) {
      if (which === "newest-tidemark") {
        for await (const _ of topic.replay({ after })) void _;
      } else {
        const messages = await (await js.consumers.get(stream, { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: last })).consume();
        for await (const _ of messages) break;
        await messages.close();
      }
    }
    break;
  }
  default:
    throw new Error(`unknown case ${which}`);
}
const used = process.cpuUsage(cpu);
const ms = performance.now() - started;
console.log(`${which}: ${ops} ops in ${ms.toFixed(0)} ms, ${((used.user + used.system) / ops).toFixed(1)} µs CPU/op, nats-server ${nats.version}`);
await sync.close();
await nc.close();
