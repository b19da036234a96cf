/**
 * Tidemark's own publish request (core/publish/publish-request.ts): one inbox subscription and one timer
 * per connection. Its answers and failures must read as nats.js's did, so the retry loop and the
 * error mapping treat them the same way.
 */
import { describe, expect, it } from "vitest";
import { connect } from "@nats-io/transport-node";
import { ClosedConnectionError, headers as natsHeaders, TimeoutError } from "@nats-io/nats-core";
import { BrokerUnavailableError, createSync, InternalError } from "../../src/index.js";
import { runtimeOf, ConnectionDrops, isNoResponders, isTransient, jsErrorCode, LeaderElected, mapNatsError, PublishRequests, publishesPending } from "../../src/internal.js";
import { freeze, startTestNats, thaw, uniqueNamespace } from "@tidemark/testing";
import { useCoreFixture } from "./fixture.js";

const fx = useCoreFixture();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("publish request", () => {
  it("publish - timed-out attempts' late answers are dropped: 20,000 publishes across a freeze store 20,000 events and leave nothing pending", async () => {
    // Buffered: 20,000 acknowledgements each waiting for an fsync would take minutes here.
    await using nats = await startTestNats({ durability: "buffered" });
    const sync = createSync({ namespace: uniqueNamespace(), nats: { servers: nats.url }, requestTimeoutMs: 2_000, publishTimeoutMs: 30_000 });
    try {
      const t = sync.topic<{ n: number }>({ id: "request.late" });
      await t.publish({ data: { n: -1 } });
      const { nc } = await runtimeOf(t).ready();
      const frozen = (async () => {
        await sleep(150);
        await freeze(nats.pid);
        // Longer than requestTimeoutMs: the attempts in flight time out and are sent again with
        // their ids; their first answers arrive after the thaw, for tokens already gone.
        await sleep(3_000);
        thaw(nats.pid);
      })();
      const receipts = [];
      for (let done = 0; done < 20_000; done += 1_000) {
        receipts.push(...(await Promise.all(Array.from({ length: 1_000 }, (_, i) => t.publish({ data: { n: done + i } })))));
      }
      await frozen;
      expect(new Set(receipts.map((r) => r.streamSequence)).size).toBe(20_000);
      // Exactly one event per call: the retries met their first attempts' ids in the dedupe window.
      expect(t.cursorSequence(await t.head())).toBe(20_001);
      await sleep(500); // any answer still on its way
      expect(publishesPending(sync, nc)).toBe(0);
    } finally {
      thaw(nats.pid);
      await sync.close();
    }
  }, 120_000);

  it("publish request - nobody taking the subject is NoResponders: transient, nothing stored, BrokerUnavailableError when mapped", async () => {
    const nc = await connect({ servers: fx.nats.url });
    try {
      const requests = new PublishRequests(nc, new ConnectionDrops());
      const err = await requests.send("nobody.listens.here", new Uint8Array([1]), natsHeaders(), 2_000).then(() => undefined, (e: unknown) => e);
      expect(isNoResponders(err)).toBe(true);
      expect(isTransient(err)).toBe(true);
      expect(mapNatsError(err)).toBeInstanceOf(BrokerUnavailableError);
      expect(requests.size).toBe(0);
    } finally {
      await nc.close();
    }
  });

  it("publish request - a JetStream API error in the answer keeps its err_code", async () => {
    const nc = await connect({ servers: fx.nats.url });
    try {
      await fx.jsm.streams.add({ name: `REQ_${uniqueNamespace().replace(/\W/g, "_")}`, subjects: ["request.api.>"] });
      const requests = new PublishRequests(nc, new ConnectionDrops());
      const h = natsHeaders();
      h.set("Nats-Expected-Stream", "SOME_OTHER_STREAM");
      const err = await requests.send("request.api.x", new Uint8Array([1]), h, 2_000).then(() => undefined, (e: unknown) => e);
      expect(jsErrorCode(err)).toBe(10060); // expected stream does not match
      expect(isTransient(err)).toBe(false);
      expect(mapNatsError(err)).toBeInstanceOf(InternalError);
      // And an accepted one is the stream's acknowledgement.
      const ack = await requests.send("request.api.x", new Uint8Array([1]), natsHeaders(), 2_000);
      expect(ack).toMatchObject({ seq: 1, duplicate: false });
    } finally {
      await nc.close();
    }
  });

  it("publish request - one timer serves every timeout: a short one sent after a long one still times out on time, as TimeoutError", async () => {
    const nc = await connect({ servers: fx.nats.url });
    try {
      await fx.jsm.streams.add({ name: `REQ_${uniqueNamespace().replace(/\W/g, "_")}`, subjects: ["request.timer.>"] });
      const requests = new PublishRequests(nc, new ConnectionDrops());
      await freeze(fx.nats.pid);
      const long = requests.send("request.timer.x", new Uint8Array([1]), natsHeaders(), 60_000).then(() => undefined, (e: unknown) => e);
      const started = Date.now();
      const err = await requests.send("request.timer.x", new Uint8Array([2]), natsHeaders(), 300).then(() => undefined, (e: unknown) => e);
      const waited = Date.now() - started;
      expect(err).toBeInstanceOf(TimeoutError);
      expect(isTransient(err)).toBe(true);
      expect(waited).toBeGreaterThanOrEqual(290);
      expect(waited).toBeLessThan(5_000);
      expect(requests.size).toBe(1); // the long one still waits
      thaw(fx.nats.pid);
      expect(await long).toBeUndefined(); // answered after the thaw
      expect(requests.size).toBe(0);
    } finally {
      thaw(fx.nats.pid);
      await nc.close();
    }
  });

  it("publish request - an attempt in flight fails at once when the connection drops, and with ClosedConnectionError when it closes", async () => {
    const nc = await connect({ servers: fx.nats.url });
    try {
      await fx.jsm.streams.add({ name: `REQ_${uniqueNamespace().replace(/\W/g, "_")}`, subjects: ["request.drop.>"] });
      const drops = new ConnectionDrops();
      const requests = new PublishRequests(nc, drops);
      await freeze(fx.nats.pid);
      const started = Date.now();
      const dropped = requests.send("request.drop.x", new Uint8Array([1]), natsHeaders(), 30_000).then(() => undefined, (e: unknown) => e);
      drops.dropped();
      expect((await dropped) as Error).toMatchObject({ message: "the connection dropped" });
      // The watcher is back for the next drop.
      const again = requests.send("request.drop.x", new Uint8Array([1]), natsHeaders(), 30_000).then(() => undefined, (e: unknown) => e);
      drops.dropped();
      expect((await again) as Error).toMatchObject({ message: "the connection dropped" });
      const closing = requests.send("request.drop.x", new Uint8Array([1]), natsHeaders(), 30_000).then(() => undefined, (e: unknown) => e);
      const closed = nc.close(); // its flush waits for the thaw
      expect(await closing).toBeInstanceOf(ClosedConnectionError);
      thaw(fx.nats.pid);
      await closed;
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(requests.size).toBe(0);
    } finally {
      thaw(fx.nats.pid);
      await nc.close();
    }
  });

  it("publish request - a leader election of its stream fails an attempt in flight at once (LeaderElected); other streams' attempts wait on", async () => {
    const nc = await connect({ servers: fx.nats.url });
    const other = await connect({ servers: fx.nats.url });
    try {
      // A responder that takes every request and never answers: a leader that dropped its proposals.
      other.subscribe("request.elect.>", { callback: () => undefined });
      await other.flush();
      const requests = new PublishRequests(nc, new ConnectionDrops());
      await nc.flush(); // the advisory subscription is in place
      const started = Date.now();
      const mine = requests.send("request.elect.a", new Uint8Array([1]), natsHeaders(), 30_000, "ELECT_A").then(() => undefined, (e: unknown) => e);
      const theirs = requests.send("request.elect.b", new Uint8Array([1]), natsHeaders(), 1_500, "ELECT_B").then(() => undefined, (e: unknown) => e);
      const unnamed = requests.send("request.elect.c", new Uint8Array([1]), natsHeaders(), 1_500).then(() => undefined, (e: unknown) => e);
      await nc.flush();
      other.publish("$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED.ELECT_A", JSON.stringify({ stream: "ELECT_A" }));
      const err = await mine;
      expect(err).toBeInstanceOf(LeaderElected);
      expect(err).toMatchObject({ stream: "ELECT_A" });
      expect(Date.now() - started).toBeLessThan(1_000);
      expect(requests.size).toBe(2);
      expect(await theirs).toBeInstanceOf(TimeoutError);
      expect(await unnamed).toBeInstanceOf(TimeoutError);
      expect(requests.size).toBe(0);
    } finally {
      await other.close();
      await nc.close();
    }
  });
});
