/**
 * A browser's first IndexedDB open is slow (it creates the database): the server's `welcome` can
 * come before the engine knows which principal it last saw. The feed's first read (for a
 * principal not yet known) then finishes in the same turn as `welcome` starts the read for the
 * principal it names. Only the newer read may count: the feed is subscribed once, with that
 * principal's history, and reaches the live edge for good (setup in engine-fixture.ts).
 *
 * The slow IndexedDB is a stand-in beside the real bridge (Node has none): its open answers only
 * when the test says so, and each read takes 150 ms. Chromium's own slow
 * first open is what the packaging check and the e2e suite met (docs/reliability.md).
 */
import { afterEach, describe, expect, it } from "vitest";
import { ProfileEngine } from "../src/engine/profile-engine.js";
import type { FeedStateChange } from "../src/engine/model.js";
import type { TabMessage } from "../src/types.js";
import { config, startBridge, topic, until, useEngineSuite } from "./engine-fixture.js";

useEngineSuite();

/**
 * Installs an `indexedDB` whose open answers when `release()` is called, and whose reads and
 * writes each take `ms` (Chromium's first reads are tens of milliseconds). It keeps nothing: every
 * read finds no record, as in a profile that never saved one.
 */
function slowIndexedDb(ms: number): { release(): void } {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const later = (fn: () => void) => void setTimeout(fn, ms);
  const objectStore = () => ({
    get: () => {
      const request: { result: undefined; onsuccess?: () => void } = { result: undefined };
      later(() => request.onsuccess?.());
      return request;
    },
    put: () => undefined,
  });
  const db = {
    objectStoreNames: { contains: () => true },
    transaction: () => {
      const tx: { objectStore: typeof objectStore; oncomplete?: () => void } = { objectStore };
      later(() => tx.oncomplete?.());
      return tx;
    },
  };
  const open = () => {
    const request: { result: typeof db; onsuccess?: () => void } = { result: db };
    void gate.then(() => request.onsuccess?.());
    return request;
  };
  (globalThis as { indexedDB?: unknown }).indexedDB = { open };
  return { release };
}

afterEach(() => {
  delete (globalThis as { indexedDB?: unknown }).indexedDB;
});

describe("engine - the principal is known only after welcome", () => {
  it("engine - a feed read before the first IndexedDB open answers is subscribed once and stays live", async () => {
    await topic.publish({ tenantId: "acme", data: { n: 1 } });
    const idb = slowIndexedDb(150);
    const { server } = await startBridge();
    const changes: FeedStateChange[] = [];
    const messages: TabMessage[] = [];
    const engine = new ProfileEngine({ ...config(server.port), database: "slow-first-open" }, { feedState: (c) => changes.push(c) });
    try {
      engine.attach({ id: "t", focused: true, listener: (m) => messages.push(m), getToken: () => "token-ada", hint: null });
      const opened = engine.open("t", { id: "f", mode: "hub", topic: "engine.feed", tenantId: "acme", effects: false });
      // The socket is open and welcomed; the profile's first IndexedDB open has not answered.
      await until(() => engine.stats().connectionId !== undefined);
      await new Promise((r) => setTimeout(r, 50));
      idb.release();
      await opened;
      await until(() => engine.stats().status === "live");
      // Given time for any late read to land, the feed is still at the live edge.
      await new Promise((r) => setTimeout(r, 300));
      expect(changes.at(-1)?.newState.kind).toBe("caught_up");
      expect(engine.stats().status).toBe("live");
      const statuses = messages.flatMap((m) => (m.type === "status" ? [m.status] : []));
      expect(statuses.at(-1)).toBe("live");
      // One subscription on the wire: the stale read did not subscribe as well.
      const kinds = changes.map((c) => c.newState.kind);
      expect(kinds.filter((k) => k === "subscribed")).toHaveLength(1);

      // Still delivered after that: the log the feed writes to is the one it shows.
      await topic.publish({ tenantId: "acme", data: { n: 2 } });
      await until(() => messages.some((m) => (m.type === "items" || m.type === "snapshot") && m.items.some((i) => i.kind === "event" && (i.event.data as { n: number }).n === 2)));
    } finally {
      await engine.shutdown();
    }
  });
});
