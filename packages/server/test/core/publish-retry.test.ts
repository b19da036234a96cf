/**
 * One publish() stores at most one event: every publish carries a message id and transient
 * failures are retried with that id until the deadline (`publishTimeoutMs`).
 */
import { describe, it, expect } from "vitest";
import { BrokerUnavailableError, createMeterRegistry, createSync, ErrorCode } from "../../src/index.js";
import { freeze, thaw } from "@tidemark/testing";
import { startTestNats, uniqueNamespace } from "@tidemark/testing";
import { collect } from "./fixture.js";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { confirmStreamGone, sendWithRetry, type SendContext, publishHeaderPrefix, PublishRequests, ConnectionDrops, mapNatsError, type TopicHandles } from "../../src/internal.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What `sendWithRetry` needs, for a stream played by the test on `nc` (2 s attempts, 8 s deadline). */
function sendContext(nc: NatsConnection, stream: string, streamGone: SendContext["streamGone"]): SendContext {
  const requests = new PublishRequests(nc, new ConnectionDrops());
  const handles = { nc } as TopicHandles;
  const topic = stream.toLowerCase();
  return {
    topic,
    stream,
    headerPrefix: publishHeaderPrefix(stream),
    attributes: { topic },
    meters: createMeterRegistry(),
    requestTimeoutMs: 2_000,
    deadlineMs: 8_000,
    ready: () => Promise.resolve(handles),
    current: () => handles,
    reprovision: () => undefined,
    requests: (c: NatsConnection) => (c === nc ? requests : expect.unreachable()),
    streamGone,
    mapError: (err) => mapNatsError(err),
  };
}

describe("publish retries", () => {
  it("publish - a server frozen mid-publish and resumed within the deadline stores exactly one event", async () => {
    await using nats = await startTestNats();
    const sync = createSync({ namespace: uniqueNamespace(), nats: { servers: nats.url }, requestTimeoutMs: 1_000, publishTimeoutMs: 15_000 });
    try {
      const t = sync.topic<string>({ id: "retry.frozen" });
      await t.publish({ data: "warm" });
      for (const idempotencyKey of [undefined, "k1"]) {
        await freeze(nats.pid);
        const publishing = t.publish({ data: `frozen-${idempotencyKey}`, idempotencyKey });
        // Longer than requestTimeoutMs: the first attempt times out, retries go out with its id.
        await sleep(3_000);
        thaw(nats.pid);
        const receipt = await publishing;
        // Without a key: this call's own event, even when a retry was answered as a duplicate.
        if (idempotencyKey === undefined) expect(receipt.duplicate).toBe(false);
        expect(receipt.streamSequence).toBeGreaterThan(1);
      }
      const events = await collect(t.replay());
      expect(events.map((e) => e.data)).toEqual(["warm", "frozen-undefined", "frozen-k1"]);
    } finally {
      thaw(nats.pid);
      await sync.close();
    }
  });

  it("publish - a broker away past the deadline fails once, bounded, with maybeStored", async () => {
    await using nats = await startTestNats();
    const sync = createSync({ namespace: uniqueNamespace(), nats: { servers: nats.url }, requestTimeoutMs: 1_000, publishTimeoutMs: 2_500 });
    try {
      const t = sync.topic<string>({ id: "retry.deadline" });
      await t.publish({ data: "warm" });
      await freeze(nats.pid);
      const started = Date.now();
      const err = await t.publish({ data: "lost?" }).then(() => undefined, (e: unknown) => e);
      const waited = Date.now() - started;
      thaw(nats.pid);
      expect(err).toBeInstanceOf(BrokerUnavailableError);
      expect(err).toMatchObject({ code: ErrorCode.BrokerUnavailable, maybeStored: true });
      // Bounded by the deadline, not by a second full timeout of a "was the stream deleted?" check.
      expect(waited).toBeGreaterThanOrEqual(2_400);
      expect(waited).toBeLessThan(2_500 + 1_500);
      // At most one event was stored by that call.
      await sleep(500);
      expect((await collect(t.replay())).filter((e) => e.data === "lost?").length).toBeLessThanOrEqual(1);
    } finally {
      thaw(nats.pid);
      await sync.close();
    }
  });

  it("publish - an attempt in flight when the connection drops keeps maybeStored true when the connection then stays down, and it may indeed be stored", async () => {
    await using nats = await startTestNats();
    // The attempt outlives the stale-connection drop (two missed pings, 4-6 s): the drop, not
    // a timeout, ends it; the re-send is held while the connection is down (connectWaitMs).
    const sync = createSync({ namespace: uniqueNamespace(), nats: { servers: nats.url }, requestTimeoutMs: 20_000, publishTimeoutMs: 30_000, logger: false });
    try {
      const t = sync.topic<string>({ id: "retry.dropped" });
      await t.publish({ data: "warm" });
      await freeze(nats.pid);
      const err = await t.publish({ data: "in-doubt", idempotencyKey: "doubt" }).then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(BrokerUnavailableError);
      expect(err).toMatchObject({ maybeStored: true });
      expect((err as Error).message).toContain("not connected");
      expect((err as Error).message).toContain("may have been stored");
      thaw(nats.pid);
      // The frozen server may have had the bytes (its socket took them). Stored by it or not,
      // the same key inside the dedupe window ends with the event stored once.
      const again = await t.publish({ data: "in-doubt", idempotencyKey: "doubt" });
      const events = await collect(t.replay());
      expect(events.map((e) => e.data)).toEqual(["warm", "in-doubt"]);
      expect(again.streamSequence).toBe(2);
    } finally {
      thaw(nats.pid);
      await sync.close();
    }
  });

  it("publish - nothing can have been stored when no broker ever answered: maybeStored is false", async () => {
    const gone = await startTestNats();
    const url = gone.url;
    await gone[Symbol.asyncDispose]();
    const sync = createSync({ namespace: uniqueNamespace(), nats: { servers: url }, requestTimeoutMs: 500, publishTimeoutMs: 1_500 });
    try {
      const started = Date.now();
      const err = await sync.topic({ id: "retry.nobody" }).publish({ data: 1 }).then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(BrokerUnavailableError);
      expect(err).toMatchObject({ maybeStored: false });
      expect(Date.now() - started).toBeLessThan(1_500 + 1_500);
    } finally {
      await sync.close();
    }
  });

  it("publish - a stream deleted by another process: no responders, provisioned again, stored once", async () => {
    await using nats = await startTestNats();
    const namespace = uniqueNamespace();
    const mine = createSync({ namespace, nats: { servers: nats.url } });
    const theirs = createSync({ namespace, nats: { servers: nats.url } });
    try {
      const t = mine.topic<number>({ id: "retry.deleted" });
      await t.publish({ data: 1 });
      await theirs.topic({ id: "retry.deleted" }).destroy();
      const r = await t.publish({ data: 2 });
      expect(r.streamSequence).toBe(1);
      expect((await collect(t.replay())).map((e) => e.data)).toEqual([2]);
    } finally {
      await theirs.close();
      await mine.close();
    }
  });

  it("publish - no responders while the stream check goes unanswered (an election): retries go on, and the stream's first answer acknowledges the publish", async () => {
    // The pause fault test's stall: after a thaw the stream answered 503 while its leader was
    // elected, and the meta group was electing too, so the "was the stream deleted?" check got
    // no answer. The publish waited on that check for the rest of its deadline instead of
    // retrying; the stream was back a second later. Here: the publish subject has nobody (a
    // real 503 from the server) until `backAt`, and the check asks a subject whose only
    // subscriber never answers.
    await using nats = await startTestNats();
    const nc = await connect({ servers: nats.url });
    const swallow = nc.subscribe("check.unanswered", { callback: () => undefined });
    try {
      const subject = `stream.electing.${uniqueNamespace()}`;
      let checks = 0;
      const ctx = sendContext(nc, "ELECTING", (_h, boundMs) => {
        checks++;
        return confirmStreamGone(() => nc.request("check.unanswered", undefined, { timeout: 60_000 }), boundMs);
      });
      const started = Date.now();
      const backAt = started + 1_000;
      const stream = (async () => {
        await sleep(backAt - Date.now());
        const sub = nc.subscribe(subject, {
          callback: (_e, m) => {
            m.respond(JSON.stringify({ stream: "ELECTING", seq: 7 }));
          },
        });
        await nc.flush();
        return sub;
      })();
      const sent = await sendWithRetry(ctx, subject, new TextEncoder().encode("{}"), "!id").then(
        (s) => ({ seq: s.ack.seq, at: Date.now() }),
        (e: unknown) => ({ err: String(e), at: Date.now() }),
      );
      (await stream).unsubscribe();
      expect(sent).toMatchObject({ seq: 7 });
      // The back-off tops out at 1.6 s: answered within that of the stream's return, with margin.
      expect(sent.at - backAt).toBeLessThan(1_600 + 1_000);
      // One unanswered check at a time, not one per 503.
      expect(checks).toBe(1);
    } finally {
      swallow.unsubscribe();
      await nc.close();
    }
  });

  it("publish - a leader answering 'store is closed' (its stream stopped after the commit) is sent again with the same id, and the next leader's answer ends the call: not 'nothing was stored'", async () => {
    // nats-server's leader of a replicated stream answers 10077 "store is closed" when its stream
    // stops between the commit and its own apply (a reset of a damaged store, a step-down); the
    // other replicas apply the message. The store-damage fault test met it once in ten runs: the
    // call said "nothing was stored" of an event the stream held. Here a subscriber on the publish
    // subject plays both leaders: the first attempt gets the old leader's answer, the second the
    // next leader's duplicate acknowledgement of what the replicas stored.
    await using nats = await startTestNats();
    const nc = await connect({ servers: nats.url });
    try {
      const subject = `stream.storeclosed.${uniqueNamespace()}`;
      const ids: string[] = [];
      const sub = nc.subscribe(subject, {
        callback: (_e, m) => {
          ids.push(m.headers?.get("Nats-Msg-Id") ?? "");
          if (ids.length === 1) m.respond(JSON.stringify({ error: { code: 503, err_code: 10077, description: "store is closed" } }));
          else m.respond(JSON.stringify({ stream: "DAMAGED", seq: 42, duplicate: true }));
        },
      });
      await nc.flush();
      const ctx = sendContext(nc, "DAMAGED", () => Promise.resolve(false));
      const sent = await sendWithRetry(ctx, subject, new TextEncoder().encode("{}"), "!id").then(
        (s) => ({ seq: s.ack.seq }),
        (e: unknown) => ({ err: String(e), maybeStored: (e as { maybeStored?: boolean }).maybeStored }),
      );
      sub.unsubscribe();
      expect(sent).toEqual({ seq: 42 });
      expect(ids).toEqual(["!id", "!id"]);
    } finally {
      await nc.close();
    }
  });
});
