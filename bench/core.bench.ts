/**
 * The topic core against raw @nats-io/jetstream, in one run against one embedded nats-server:
 *   (a) publish awaited one by one            vs js.publish awaited        (target ratio >= 0.85)
 *   (b) publish with 1,000 in flight          vs js.publish, 1,000 in flight (>= 0.85)
 *   (c) replay of 20,000 events               vs a raw ordered consumer on the same stream (>= 0.8)
 *   (d) tenant-filtered replay (1 tenant of 10) vs a raw ordered consumer on the tenant subject
 *   (e) replay of the newest event only: the fixed cost of one replay() call (issue #15: >= 0.9)
 *   (f) the tenant read of (d) vs a dedicated topic holding just those 2,000 events
 *   (g) a sparse tenant: 10 of its events among 20,000 of 1,000 other tenants (an inbox resuming
 *       after a minute of other users' events) vs a raw ordered consumer on its subject
 *   (a', b') as (a) and (b), against a raw connection with `noAsyncTraces: true`, which
 *            Tidemark's own connection sets: the same client option on both sides (issue #15: >= 0.95)
 *   (c')     as (c), against a raw ordered *push* consumer, the kind Tidemark reads with (>= 0.95)
 * Each side is warmed up, then the sides run alternately; the tables show median rates.
 * The whole set runs once per server, one after another in one run: the current nats-server
 * (the embedded default: .tools/bin, durability fsync), the same binary with durability
 * buffered (what fsync costs), and the 2.9 floor at /usr/sbin/nats-server (buffered, its only
 * mode).
 *
 *   pnpm bench core                  (BENCH_ROUNDS=n to change the number of timed rounds;
 *                                     BENCH_SERVERS=current,buffered,2.9 to choose servers;
 *                                     BENCH_ROWS=c,c' to run only those rows: a b a' b' c c' d e f g)
 */
import { connect } from "@nats-io/transport-node";
import { DeliverPolicy, jetstream, jetstreamManager, type JetStreamClient, type StreamConfig } from "@nats-io/jetstream";
import { createSync, findNatsServer, type Durability, type Topic } from "@tidemark/server";
import { startBenchNats } from "./lib/nats.js";
import { compare, type Comparison } from "./lib/measure.js";
import { comparisonRow, environment, missed, printTable, type Row } from "./lib/table.js";
import { chosenRows, ifChosen } from "./lib/rows.js";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
// Reads are short (a 20,000-event replay takes ~0.2 s): twice the rounds for a steadier median.
const READ_ROUNDS = ROUNDS * 2 + 1;
// Publish counts at scale 1; the fsync run publishes a tenth (every acknowledgement waits for
// an fsync: a few hundred per second on a shared virtual disk).
const BASE_SEQUENTIAL = 5_000;
const IN_FLIGHT = 1_000;
const BASE_IN_FLIGHT_TOTAL = 20_000;
// Every acknowledgement may wait behind up to IN_FLIGHT fsyncs: allow it, on both sides.
const REQUEST_TIMEOUT_MS = 60_000;
const REPLAY = 20_000;
const TENANTS = 10;
const GiB = 1024 ** 3;
const want = chosenRows(process.env.BENCH_ROWS, ["a", "b", "a'", "b'", "c", "c'", "d", "e", "f", "g"]);
const READS = ["c", "c'", "d", "e", "f", "g"].some(want);
/** Events of the sparse tenant of (g) among REPLAY. */
const SPARSE = 10;

interface Item {
  itemId: string;
  qty: number;
  n: number;
}
const item = (n: number): Item => ({ itemId: `sku-${n % 1000}`, qty: 1 + (n % 7), n });
const encoder = new TextEncoder();

interface BenchServer {
  label: string;
  binary: string;
  durability: Durability;
  /** Fraction of the publish counts this server runs. */
  writeScale: number;
}
const SERVERS: Record<string, () => BenchServer> = {
  current: () => ({ label: "current nats-server, durability fsync (the default)", binary: findNatsServer(), durability: "fsync", writeScale: 0.1 }),
  buffered: () => ({ label: "current nats-server, durability buffered", binary: findNatsServer(), durability: "buffered", writeScale: 1 }),
  "2.9": () => ({ label: "nats-server 2.9 (the floor), buffered", binary: "/usr/sbin/nats-server", durability: "buffered", writeScale: 1 }),
};

async function runOn(server: BenchServer): Promise<void> {
  const SEQUENTIAL = Math.round(BASE_SEQUENTIAL * server.writeScale);
  const IN_FLIGHT_TOTAL = Math.max(IN_FLIGHT, Math.round(BASE_IN_FLIGHT_TOTAL * server.writeScale));
  await using nats = await startBenchNats({ binary: server.binary, durability: server.durability });
  const nc = await connect({ servers: nats.url, name: "bench-raw" });
  const jsm = await jetstreamManager(nc);
  const js: JetStreamClient = jetstream(nc, { timeout: REQUEST_TIMEOUT_MS });
  // nats.js builds two Error objects per request for async stack traces unless told not to.
  const ncTuned = await connect({ servers: nats.url, name: "bench-raw-tuned", noAsyncTraces: true });
  const jsTuned: JetStreamClient = jetstream(ncTuned, { timeout: REQUEST_TIMEOUT_MS });
  const sync = createSync({ namespace: "bench", nats: { servers: nats.url }, requestTimeoutMs: REQUEST_TIMEOUT_MS });
  console.log(`start: ${environment(nc.info?.version)}, durability ${nats.durability}`);

  /** The JetStream stream behind a topic (Tidemark records the topic id in the description). */
  async function streamOf(topicId: string): Promise<string> {
    for await (const info of jsm.streams.list()) {
      if (!info.config.name.startsWith("TMEV_")) continue;
      const desc = JSON.parse(info.config.description || "{}") as { kind?: string; topic?: string };
      if (desc.kind === "events" && desc.topic === topicId) return info.config.name;
    }
    throw new Error(`no stream for topic ${topicId}`);
  }

  try {
    const retention = { maxBytes: GiB / 2, maxAgeMs: 3600_000 };
    const writes = sync.topic<Item>({ id: "bench.writes", retention, deadLetterRetention: { maxBytes: 16 * 1024 ** 2 } });
    const reads = sync.topic<Item>({ id: "bench.reads", retention, deadLetterRetention: { maxBytes: 16 * 1024 ** 2 } });
    const dedicated = sync.topic<Item>({ id: "bench.dedicated", retention, deadLetterRetention: { maxBytes: 16 * 1024 ** 2 } });
    const sparse = sync.topic<Item>({ id: "bench.sparse", retention, deadLetterRetention: { maxBytes: 16 * 1024 ** 2 } });
    await writes.head(); // provisions
    await reads.head();

    // The raw stream copies the Tidemark stream's configuration (limits, dedupe window, republish)
    // so both sides make the server do the same work per message.
    const twin = (await jsm.streams.info(await streamOf("bench.writes"))).config;
    const rawConfig: Partial<StreamConfig> & { name: string } = {
      ...twin,
      name: "RAW_WRITES",
      description: "raw baseline",
      subjects: ["raw.writes.>"],
      republish: twin.republish ? { src: "raw.writes.>", dest: "rawlive.writes.>" } : undefined,
    };
    await jsm.streams.add(rawConfig);
    const rawSubject = "raw.writes._";

    // ---- (a) awaited one by one ----
    let n = 0;
    const sequential = await ifChosen(want, "a", () => compare(
      async () => {
        for (let i = 0; i < SEQUENTIAL; i++) await writes.publish({ data: item(n++) });
        return SEQUENTIAL;
      },
      async () => {
        for (let i = 0; i < SEQUENTIAL; i++) await js.publish(rawSubject, encoder.encode(JSON.stringify(item(n++))));
        return SEQUENTIAL;
      },
      { rounds: ROUNDS },
    ));

    // ---- (b) 1,000 in flight ----
    const windows = async (one: (i: number) => Promise<unknown>) => {
      for (let done = 0; done < IN_FLIGHT_TOTAL; done += IN_FLIGHT) {
        await Promise.all(Array.from({ length: IN_FLIGHT }, (_, i) => one(done + i)));
      }
      return IN_FLIGHT_TOTAL;
    };
    const inFlight = await ifChosen(want, "b", () => compare(
      () => windows(() => writes.publish({ data: item(n++) })),
      () => windows(() => js.publish(rawSubject, encoder.encode(JSON.stringify(item(n++))))),
      { rounds: ROUNDS },
    ));

    // ---- (a', b') the same against a raw connection with noAsyncTraces ----
    const sequentialTuned = await ifChosen(want, "a'", () => compare(
      async () => {
        for (let i = 0; i < SEQUENTIAL; i++) await writes.publish({ data: item(n++) });
        return SEQUENTIAL;
      },
      async () => {
        for (let i = 0; i < SEQUENTIAL; i++) await jsTuned.publish(rawSubject, encoder.encode(JSON.stringify(item(n++))));
        return SEQUENTIAL;
      },
      { rounds: ROUNDS },
    ));
    const inFlightTuned = await ifChosen(want, "b'", () => compare(
      () => windows(() => writes.publish({ data: item(n++) })),
      () => windows(() => jsTuned.publish(rawSubject, encoder.encode(JSON.stringify(item(n++))))),
      { rounds: ROUNDS },
    ));

    // ---- (c) replay of 20,000 events ----
    for (let done = 0; READS && done < REPLAY; done += IN_FLIGHT) {
      await Promise.all(
        Array.from({ length: IN_FLIGHT }, (_, i) => reads.publish({ data: item(done + i), tenantId: `tenant-${(done + i) % TENANTS}` })),
      );
    }
    const readStream = READS ? await streamOf("bench.reads") : "";
    const rawRead = async (filter?: string, expected = REPLAY, push = false) => {
      const options = filter ? { filter_subjects: filter } : undefined;
      const consumer = push ? await js.consumers.getPushConsumer(readStream, options) : await js.consumers.get(readStream, options);
      const messages = await consumer.consume();
      let count = 0;
      let sum = 0;
      for await (const m of messages) {
        sum += (m.json<{ d: Item }>().d.n & 1);
        if (++count === expected || m.info.pending === 0) break;
      }
      await messages.close();
      if (count !== expected) throw new Error(`raw read got ${count} of ${expected} (checksum ${sum})`);
      return count;
    };
    const tidemarkRead = async (topic: Topic<Item>, tenantId?: string, expected = REPLAY) => {
      let count = 0;
      let sum = 0;
      for await (const e of topic.replay(tenantId === undefined ? {} : { tenantId })) {
        sum += e.data.n & 1;
        count++;
      }
      if (count !== expected) throw new Error(`replay got ${count} of ${expected} (checksum ${sum})`);
      return count;
    };
    const replay = await ifChosen(want, "c", () => compare(
      () => tidemarkRead(reads),
      () => rawRead(),
      { rounds: READ_ROUNDS },
    ));

    const replayPush = await ifChosen(want, "c'", () => compare(
      () => tidemarkRead(reads),
      () => rawRead(undefined, REPLAY, true),
      { rounds: READ_ROUNDS },
    ));

    // ---- (d) one tenant of ten: filtered on the server, gap check once per batch ----
    const perTenant = REPLAY / TENANTS;
    const lastOfTenant = READS ? reads.cursorSequence((await reads.latestCursor({ tenantId: "tenant-3" }))!) : 0;
    const filter = READS ? (await jsm.streams.getMessage(readStream, { seq: lastOfTenant }))!.subject : "";
    const tenant = await ifChosen(want, "d", () => compare(
      () => tidemarkRead(reads, "tenant-3", perTenant),
      () => rawRead(filter, perTenant),
      { rounds: READ_ROUNDS },
    ));
    // ---- (f) one tenant of a shared topic vs a topic of its own ----
    if (want("f")) await Promise.all(Array.from({ length: perTenant }, (_, i) => dedicated.publish({ data: item(i), tenantId: "tenant-3" })));
    const ownTopic = await ifChosen(want, "f", () => compare(
      () => tidemarkRead(reads, "tenant-3", perTenant),
      () => tidemarkRead(dedicated, undefined, perTenant),
      { rounds: READ_ROUNDS },
    ));

    // ---- (g) a sparse tenant: SPARSE events spread over REPLAY of 1,000 other tenants ----
    const every = REPLAY / SPARSE;
    for (let done = 0; want("g") && done < REPLAY; done += IN_FLIGHT) {
      await Promise.all(
        Array.from({ length: IN_FLIGHT }, (_, i) => sparse.publish({ data: item(done + i), tenantId: (done + i) % every === every / 2 ? "rare" : `u${(done + i) % 1000}` })),
      );
    }
    const sparseStream = want("g") ? await streamOf("bench.sparse") : "";
    const rareSubject = want("g") ? (await jsm.streams.getMessage(sparseStream, { seq: sparse.cursorSequence((await sparse.latestCursor({ tenantId: "rare" }))!) }))!.subject : "";
    const rawSparse = async () => {
      const consumer = await js.consumers.get(sparseStream, { filter_subjects: rareSubject });
      const messages = await consumer.consume();
      let count = 0;
      for await (const m of messages) if (++count === SPARSE || m.info.pending === 0) break;
      await messages.close();
      if (count !== SPARSE) throw new Error(`raw sparse read got ${count} of ${SPARSE}`);
      return 1;
    };
    const sparseRead = await ifChosen(want, "g", () => compare(
      async () => (await tidemarkRead(sparse, "rare", SPARSE), 1),
      rawSparse,
      { rounds: READ_ROUNDS },
    ));

    // ---- (e) the fixed cost of a replay: read only the newest event ----
    const lastSeq = reads.cursorSequence(await reads.head());
    const newest = reads.cursorAt(Math.max(lastSeq - 1, 0));
    const newestTidemark = async (times: number) => {
      for (let i = 0; i < times; i++) for await (const _ of reads.replay({ after: newest })) void _;
      return times;
    };
    const newestRaw = async (times: number) => {
      for (let i = 0; i < times; i++) {
        const consumer = await js.consumers.get(readStream, { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: lastSeq });
        const messages = await consumer.consume();
        for await (const _ of messages) break;
        await messages.close();
      }
      return times;
    };
    const single = await ifChosen(want, "e", () => compare(
      () => newestTidemark(50),
      () => newestRaw(50),
      { rounds: READ_ROUNDS },
    ));

    // Broker requests ($JS.API) made by one run of each side, counted by listening on the subjects.
    const requests = async (fn: () => Promise<unknown>) => {
      const sub = nc.subscribe("$JS.API.>");
      const kinds = new Map<string, number>();
      const counting = (async () => {
        for await (const m of sub) {
          const kind = m.subject.split(".").slice(2, 4).join(".");
          kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
        }
      })();
      await nc.flush();
      await fn();
      // Requests of the other connection reach this subscription with no ordering guarantee.
      await new Promise((r) => setTimeout(r, 200));
      await nc.flush();
      sub.unsubscribe();
      await counting;
      const total = [...kinds.values()].reduce((a, b) => a + b, 0);
      return `${total} (${[...kinds].map(([k, v]) => `${v} ${k}`).join(", ")})`;
    };
    const requestsOf = {
      replay: want("c") ? [await requests(() => tidemarkRead(reads)), await requests(() => rawRead())] : ["-", "-"],
      tenant: want("d") ? [await requests(() => tidemarkRead(reads, "tenant-3", perTenant)), await requests(() => rawRead(filter, perTenant))] : ["-", "-"],
      newest: want("e") ? [await requests(() => newestTidemark(1)), await requests(() => newestRaw(1))] : ["-", "-"],
      sparse: want("g") ? [await requests(() => tidemarkRead(sparse, "rare", SPARSE)), await requests(rawSparse)] : ["-", "-"],
    };

    console.log(`end: ${environment(nc.info?.version)}, durability ${nats.durability}; ${ROUNDS} rounds (reads ${READ_ROUNDS}), medians\n`);
    const n0 = (x: number) => x.toLocaleString("en-US");
    // A row that did not run (BENCH_ROWS) is left out of its table.
    const row = (name: string, c: Comparison | undefined, more?: Partial<Row>): Row[] => (c ? [comparisonRow(name, c, more)] : []);
    // Issue #15's core rows and targets: the "same choices" rows (raw with noAsyncTraces and an
    // ordered push consumer, as Tidemark uses) and the fixed cost of a replay.
    const issueRows: Row[] = [
      ...row(`(a') publish, awaited one by one (${n0(SEQUENTIAL)})`, sequentialTuned, { target: 0.95 }),
      ...row(`(b') publish, ${n0(IN_FLIGHT)} in flight (${n0(IN_FLIGHT_TOTAL)})`, inFlightTuned, { target: 0.95 }),
      ...row(`(c') replay, whole topic (${n0(REPLAY)})`, replayPush, { target: 0.95 }),
      ...row("(e) replay of the newest event only", single, { unit: "replays/s", target: 0.9 }),
    ];
    // Tables of rows that did not run (BENCH_ROWS) are left out.
    const print = (title: string, rs: Row[], sides?: Parameters<typeof printTable>[2]) => rs.length > 0 && printTable(title, rs, sides);
    print("Issue #15 core targets (raw: noAsyncTraces and an ordered push consumer for a', b', c'; nats.js defaults for e)", issueRows, {
      subject: "tidemark",
      baseline: "raw",
    });
    const rows: Row[] = [
      ...row(`(a) publish, awaited one by one (${n0(SEQUENTIAL)})`, sequential, { target: 0.85 }),
      ...row(`(b) publish, ${n0(IN_FLIGHT)} in flight (${n0(IN_FLIGHT_TOTAL)})`, inFlight, { target: 0.85 }),
      ...row(`(c) replay, whole topic (${n0(REPLAY)})`, replay, { target: 0.8 }),
      ...row(`(d) replay, 1 tenant of ${TENANTS} (${n0(perTenant)} of ${n0(REPLAY)})`, tenant),
      ...row(`(g) replay, a sparse tenant (${SPARSE} of ${n0(REPLAY)})`, sparseRead, { unit: "replays/s" }),
    ];
    print("Against raw @nats-io/jetstream with its default settings (pull ordered consumer, async traces on)", rows);
    print(
      "A tenant of a shared topic vs a dedicated topic (both Tidemark)",
      row(`(f) replay of ${n0(perTenant)} events`, ownTopic),
      { subject: `1 tenant of ${TENANTS}`, baseline: "own topic" },
    );
    if (["c", "d", "e", "g"].some(want)) console.log("JetStream API requests of one run (tidemark | raw):");
    if (want("c")) console.log(`  (c) ${requestsOf.replay[0]} | ${requestsOf.replay[1]}`);
    if (want("d")) console.log(`  (d) ${requestsOf.tenant[0]} | ${requestsOf.tenant[1]}`);
    if (want("e")) console.log(`  (e) ${requestsOf.newest[0]} | ${requestsOf.newest[1]}`);
    if (want("g")) console.log(`  (g) ${requestsOf.sparse[0]} | ${requestsOf.sparse[1]}`);
    if (want("d")) console.log("  (d) the tenant gap check is one STREAM.INFO per delivered batch with a jump, not one per event.");
    const misses = [...issueRows, ...rows].filter(missed);
    console.log(misses.length > 0 ? `\ntargets missed: ${misses.map((r) => r.name).join("; ")}` : "\nevery target met");
  } finally {
    await sync.close();
    await nc.close();
    await ncTuned.close();
  }
}

for (const key of (process.env.BENCH_SERVERS ?? "current,buffered,2.9").split(",")) {
  const server = SERVERS[key.trim()]?.();
  if (!server) throw new Error(`BENCH_SERVERS: unknown ${key}; have ${Object.keys(SERVERS).join(", ")}`);
  console.log(`\n##### ${server.label} #####\n`);
  await runOn(server);
}
