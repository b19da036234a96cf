/**
 * process() against a raw @nats-io/jetstream pull consumer, in one run against one embedded
 * nats-server. Each round drains EVENTS stored events through a fresh durable consumer with a
 * no-op handler, consumer creation and teardown included on both sides:
 *   process({ concurrency: 1 })   vs consume() + for-await, decode, await handler, ack
 *   process({ concurrency: 64 })  vs consume() with up to 64 handlers in flight, each acking
 * Target ratio >= 0.8 for both. The sides run alternately; the table shows median rates and
 * the client's CPU per event (process.cpuUsage()), which other load on a shared machine
 * disturbs far less than wall time.
 *
 * Then crash recovery: a worker in a child process (default lease) holds four events
 * mid-handler and is killed with SIGKILL; the figure is the time from the kill until a
 * survivor in this process has started all four again. Target: the worst round < 5 s.
 *
 *   pnpm bench process               (7 rounds, 5 kill rounds; BENCH_ROUNDS / BENCH_KILL_ROUNDS=n)
 */
import { connect } from "@nats-io/transport-node";
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, type JsMsg } from "@nats-io/jetstream";
import { createSync } from "@tidemark/server";
import { runtimeOf, durableName } from "@tidemark/server/internal";
import { startBenchNats } from "./lib/nats.js";
import { compare } from "./lib/measure.js";
import { comparisonRow, environment, missed, printTable, type Row } from "./lib/table.js";
import { spawnWorker } from "../packages/server/test/process/child.js";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const KILL_ROUNDS = Number(process.env.BENCH_KILL_ROUNDS ?? 5);
/** Handlers running in the worker that is killed. */
const KILLED_IN_FLIGHT = 4;
const REDELIVERY_TARGET_S = 5;
const EVENTS = 20_000;
const WINDOW = 1_000;
const GiB = 1024 ** 3;

interface Item {
  itemId: string;
  n: number;
}
const noop = async (_: unknown): Promise<void> => undefined;

await using nats = await startBenchNats();
const nc = await connect({ servers: nats.url, name: "bench-raw" });
const jsm = await jetstreamManager(nc);
const js = jetstream(nc);
const sync = createSync({ namespace: "bench", nats: { servers: nats.url } });

try {
  const topic = sync.topic<Item>({
    id: "bench.process",
    retention: { maxBytes: GiB / 2, maxAgeMs: 3600_000 },
    deadLetterRetention: { maxBytes: 16 * 1024 ** 2 },
  });
  for (let done = 0; done < EVENTS; done += WINDOW) {
    await Promise.all(Array.from({ length: WINDOW }, (_, i) => topic.publish({ data: { itemId: `sku-${(done + i) % 100}`, n: done + i } })));
  }
  const rt = runtimeOf(topic);
  let round = 0;

  /** Drains the topic through a fresh process() consumer. */
  const tidemark = (concurrency: number) => async () => {
    const consumer = `p${concurrency}x${round++}`;
    let count = 0;
    let finish!: () => void;
    const all = new Promise<void>((r) => (finish = r));
    const worker = await topic.process(
      { consumer, start: "earliest", delivery: { maxAttempts: 3, backoffMs: [1_000] }, concurrency },
      async (e) => {
        await noop(e.data);
        if (++count === EVENTS) finish();
      },
    );
    await all;
    await worker.stop();
    await jsm.consumers.delete(rt.streamName, durableName(rt.namespace, rt.options.id, consumer));
    await jsm.consumers.delete(rt.deadLetterStreamName, durableName(rt.namespace, rt.options.id, consumer));
    return EVENTS;
  };

  /** Drains the topic through a fresh raw durable pull consumer, acking after the handler. */
  const raw = (concurrency: number) => async () => {
    const name = `raw${concurrency}x${round++}`;
    await jsm.consumers.add(rt.streamName, {
      durable_name: name,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      filter_subject: rt.filterFor(undefined),
    });
    const consumer = await js.consumers.get(rt.streamName, name);
    const messages = await consumer.consume();
    let count = 0;
    const handle = async (m: JsMsg) => {
      await noop(m.json<{ d: Item }>().d);
      m.ack();
    };
    if (concurrency === 1) {
      for await (const m of messages) {
        await handle(m);
        if (++count === EVENTS) break;
      }
    } else {
      let inFlight = 0;
      let slot: (() => void) | undefined;
      let finish!: () => void;
      const all = new Promise<void>((r) => (finish = r));
      for await (const m of messages) {
        if (inFlight >= concurrency) await new Promise<void>((r) => (slot = r));
        inFlight++;
        void handle(m).then(() => {
          inFlight--;
          slot?.();
          slot = undefined;
          if (++count === EVENTS) finish();
        });
        if (count + inFlight === EVENTS) break;
      }
      await all;
    }
    await messages.close();
    await jsm.consumers.delete(rt.streamName, name);
    return EVENTS;
  };

  const one = await compare(tidemark(1), raw(1), { rounds: ROUNDS });
  const many = await compare(tidemark(64), raw(64), { rounds: ROUNDS });

  /** Seconds from SIGKILL of a worker holding KILLED_IN_FLIGHT events until a survivor has them all. */
  const redeliveryAfterKill = async (n: number): Promise<number> => {
    const options = { id: `bench.kill${n}`, retention: { maxBytes: 16 * 1024 ** 2, maxAgeMs: 3600_000 } };
    const killTopic = sync.topic<number>(options);
    for (let i = 0; i < KILLED_IN_FLIGHT; i++) await killTopic.publish({ data: i });
    const processOptions = { consumer: "crash", start: "earliest" as const, delivery: { maxAttempts: 3, backoffMs: [100] }, concurrency: KILLED_IN_FLIGHT };
    // Every handler of the child hangs: it holds all the events, mid-handler.
    const child = await spawnWorker({ url: nats.url, namespace: sync.namespace, topic: options, options: processOptions, hangAfter: 0 });
    const back = new Set<number>();
    try {
      await child.waitFor(() => child.lines.filter((l) => l.type === "start").length === KILLED_IN_FLIGHT, 30_000);
      const survivor = await killTopic.process(processOptions, (e) => void back.add(e.data));
      // Kill at a random point of the renewal interval (about 1 s with the default lease).
      await new Promise((r) => setTimeout(r, Math.random() * 1_000));
      const killedAt = performance.now();
      await child.kill("SIGKILL");
      while (back.size < KILLED_IN_FLIGHT) await new Promise((r) => setTimeout(r, 5));
      const seconds = (performance.now() - killedAt) / 1_000;
      await survivor.stop();
      return seconds;
    } finally {
      await child.kill("SIGKILL");
    }
  };
  const killed: number[] = [];
  for (let n = 0; n < KILL_ROUNDS; n++) killed.push(await redeliveryAfterKill(n));

  console.log(`process benchmarks: ${environment(nc.info?.version)}; ${ROUNDS} rounds, medians\n`);
  const events = EVENTS.toLocaleString("en-US");
  const rows: Row[] = [
    comparisonRow(`process(), no-op handler, concurrency 1 (${events})`, one, { target: 0.8 }),
    comparisonRow(`process(), no-op handler, concurrency 64 (${events})`, many, { target: 0.8 }),
  ];
  printTable("process() vs a raw @nats-io/jetstream pull consumer", rows);
  const cpuRatio = (c: typeof one) => (c.cpuMicros.baseline / c.cpuMicros.subject).toFixed(2);
  console.log(`client CPU per event, raw / tidemark (higher is better): concurrency 1 ${cpuRatio(one)}, concurrency 64 ${cpuRatio(many)}`);
  const sorted = [...killed].sort((a, b) => a - b);
  const worst = sorted[sorted.length - 1] ?? Number.NaN;
  const killOk = worst < REDELIVERY_TARGET_S;
  const killName = "a killed worker's in-flight events redelivered, s";
  console.log(`\n### process() crash recovery (${KILLED_IN_FLIGHT} events mid-handler, default lease, ${KILL_ROUNDS} rounds)\n`);
  console.log("| figure | median | worst | rounds | target |");
  console.log("|:--|--:|--:|:--|:--|");
  console.log(
    `| ${killName} | ${(sorted[Math.floor(sorted.length / 2)] ?? Number.NaN).toFixed(2)} | ${worst.toFixed(2)} | ` +
      `${killed.map((s) => s.toFixed(2)).join(", ")} | < ${REDELIVERY_TARGET_S} (worst) ${killOk ? "ok" : "MISSED"} |`,
  );
  const misses = [...rows.filter(missed).map((r) => r.name), ...(killOk ? [] : [killName])];
  if (misses.length > 0) console.log(`\ntargets missed: ${misses.join("; ")}`);
} finally {
  await sync.close();
  await nc.close();
}
