/**
 * The read-cursor model against a real bridge, real sockets and a real nats-server: two users,
 * each with two connections (tabs on two devices) subscribed with read state to one tenant.
 * fast-check runs random sequences of publishes, deliveries, "mark all read" from either
 * connection, reads of an older event, items read one by one, and service-side writes; after
 * every command the stored state of each user must be the model's:
 * - never backwards: the cursor is the highest one marked, whatever the order of the writes;
 * - never past what was shown: every cursor marked is one of an event that connection received,
 *   so the stored cursor is at or below the newest event the user was shown;
 * - per user: one user's writes never change the other's state, and every connection of a user
 *   is told the user's state (its last `read_state`), never the other's.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { useBridgeFixture } from "../bridge/fixture.js";
import type { TestClient } from "../bridge/client.js";
import { checkModel } from "./run.js";
import type { Topic } from "../../src/index.js";

const fx = useBridgeFixture();
fx.tokens.set("ada", { id: "ada", tenants: [] });
fx.tokens.set("bob", { id: "bob", tenants: [] });
const USERS = ["ada", "bob"] as const;
type User = (typeof USERS)[number];

interface Model {
  tenant: string;
  published: { seq: number; cursor: string; eventId: string }[];
  cursor: Record<User, number>;
  items: Record<User, Set<string>>;
  /** Highest sequence shown to each user (any of its connections). */
  shown: Record<User, number>;
}

interface Real {
  topic: Topic<number>;
  conns: Record<User, [TestClient, TestClient]>;
  refs: number;
}

type Frame = Record<string, unknown>;
const events = (c: TestClient) => c.log.filter((f) => f.type === "event").map((f) => f.event as { streamSequence: number; cursor: string; eventId: string });
const readStates = (c: TestClient) => c.log.filter((f) => f.type === "read_state").map((f) => f.read as { cursor?: string; items: string[]; version: number });

async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function markRead(real: Real, c: TestClient, body: { cursor: string } | { item: string }): Promise<Frame> {
  const ref = `m${++real.refs}`;
  c.send({ type: "mark_read", id: "f", ref, ...body });
  return c.next((f) => f.ref === ref);
}

class Publish implements fc.AsyncCommand<Model, Real> {
  constructor(readonly n: number) {}
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    for (let i = 0; i < this.n; i++) {
      const receipt = await r.topic.publish({ tenantId: m.tenant, data: i });
      m.published.push({ seq: receipt.streamSequence, cursor: receipt.cursor, eventId: receipt.eventId });
    }
  }
  toString = () => `Publish(${this.n})`;
}

/** The user's connection `k` receives every event published so far. */
class Deliver implements fc.AsyncCommand<Model, Real> {
  constructor(readonly user: User, readonly k: 0 | 1) {}
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    const c = r.conns[this.user][this.k];
    await until(() => events(c).length >= m.published.length);
    if (m.published.length) m.shown[this.user] = Math.max(m.shown[this.user], m.published.at(-1)!.seq);
  }
  toString = () => `Deliver(${this.user}, ${this.k})`;
}

/** "Mark all read" on connection `k`: the newest event that connection shows (not the head). */
class MarkAll implements fc.AsyncCommand<Model, Real> {
  constructor(readonly user: User, readonly k: 0 | 1) {}
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    const c = r.conns[this.user][this.k];
    const newest = events(c).at(-1);
    if (!newest) return;
    const answer = await markRead(r, c, { cursor: newest.cursor });
    expect(answer.type).toBe("read_state");
    m.cursor[this.user] = Math.max(m.cursor[this.user], newest.streamSequence);
    for (const id of [...m.items[this.user]]) {
      const e = m.published.find((p) => p.eventId === id)!;
      if (e.seq <= m.cursor[this.user]) m.items[this.user].delete(id);
    }
  }
  toString = () => `MarkAll(${this.user}, ${this.k})`;
}

/** Marks read up to an older event the connection shows: never moves the cursor back. */
class MarkOlder implements fc.AsyncCommand<Model, Real> {
  constructor(readonly user: User, readonly k: 0 | 1, readonly index: number) {}
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    const c = r.conns[this.user][this.k];
    const shown = events(c);
    const e = shown[this.index % Math.max(1, shown.length)];
    if (!e) return;
    await markRead(r, c, { cursor: e.cursor });
    m.cursor[this.user] = Math.max(m.cursor[this.user], e.streamSequence);
    for (const id of [...m.items[this.user]]) if (m.published.find((p) => p.eventId === id)!.seq <= m.cursor[this.user]) m.items[this.user].delete(id);
  }
  toString = () => `MarkOlder(${this.user}, ${this.k}, ${this.index})`;
}

class MarkItem implements fc.AsyncCommand<Model, Real> {
  constructor(readonly user: User, readonly k: 0 | 1, readonly index: number) {}
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    const c = r.conns[this.user][this.k];
    const shown = events(c);
    const e = shown[this.index % Math.max(1, shown.length)];
    if (!e) return;
    await markRead(r, c, { item: e.cursor });
    if (e.streamSequence > m.cursor[this.user]) m.items[this.user].add(e.eventId);
  }
  toString = () => `MarkItem(${this.user}, ${this.k}, ${this.index})`;
}

/** A service marks read for the user (an email digest that was opened), up to what it was shown. */
class ServiceMark implements fc.AsyncCommand<Model, Real> {
  constructor(readonly user: User) {}
  check = (m: Readonly<Model>) => m.shown[this.user] > 0;
  async run(m: Model, r: Real): Promise<void> {
    const e = m.published.filter((p) => p.seq <= m.shown[this.user]).at(-1)!;
    await r.topic.readState({ principal: this.user, tenantId: m.tenant }).markRead(e.cursor);
    m.cursor[this.user] = Math.max(m.cursor[this.user], e.seq);
    for (const id of [...m.items[this.user]]) if (m.published.find((p) => p.eventId === id)!.seq <= m.cursor[this.user]) m.items[this.user].delete(id);
  }
  toString = () => `ServiceMark(${this.user})`;
}

/** After every command: each user's stored state, and what each of its connections was told, is the model's. */
async function verify(m: Model, r: Real): Promise<void> {
  for (const user of USERS) {
    const state = await r.topic.readState({ principal: user, tenantId: m.tenant }).get();
    const seq = state.cursor === undefined ? 0 : r.topic.cursorSequence(state.cursor);
    expect(seq, `${user}'s cursor`).toBe(m.cursor[user]);
    expect(seq, `${user}'s cursor is past what ${user} was shown`).toBeLessThanOrEqual(Math.max(m.shown[user], ...r.conns[user].map((c) => events(c).at(-1)?.streamSequence ?? 0)));
    expect(new Set(state.items), `${user}'s items`).toEqual(m.items[user]);
    for (const c of r.conns[user]) {
      await until(() => readStates(c).at(-1)?.version === state.version);
      const told = readStates(c);
      expect(told.at(-1)!.cursor).toBe(state.cursor);
      // Versions only grow on a connection, and never carry the other user's state.
      for (let i = 1; i < told.length; i++) expect(told[i]!.version).toBeGreaterThanOrEqual(told[i - 1]!.version);
    }
  }
}

describe("read state model", () => {
  it("read state model - cursors per user never move back, never pass what was shown, and never cross users", async () => {
    const sync = fx.sync();
    const topic = sync.topic<number>({ id: "model.read" });
    const run = await fx.start({ topics: [{ topic, authorize: () => true }] }, sync);
    let runNo = 0;
    const user = fc.constantFrom<User>(...USERS);
    const k = fc.constantFrom<0 | 1>(0, 1);
    const commands = fc.commands(
      [
        // Publishes twice as often as the rest: the marks need events.
        fc.integer({ min: 1, max: 3 }).map((n) => new Publish(n)),
        fc.integer({ min: 1, max: 3 }).map((n) => new Publish(n)),
        fc.tuple(user, k).map(([u, i]) => new Deliver(u, i)),
        fc.tuple(user, k).map(([u, i]) => new MarkAll(u, i)),
        fc.tuple(user, k, fc.nat(20)).map(([u, i, n]) => new MarkOlder(u, i, n)),
        fc.tuple(user, k, fc.nat(20)).map(([u, i, n]) => new MarkItem(u, i, n)),
        user.map((u) => new ServiceMark(u)),
      ],
      { maxCommands: 40, size: "max" },
    );
    await checkModel(
      "read-state-model",
      fc.asyncProperty(commands, async (cmds) => {
        const tenant = `t${++runNo}`;
        const conns = {} as Real["conns"];
        for (const u of USERS) {
          const pair = [await run.connect(u), await run.connect(u)] as [TestClient, TestClient];
          for (const c of pair) {
            c.send({ type: "subscribe", id: "f", topic: "model.read", tenantId: tenant, mode: "hub", read: true });
            await c.next((f) => f.type === "caught_up");
          }
          conns[u] = pair;
        }
        const model: Model = { tenant, published: [], cursor: { ada: 0, bob: 0 }, items: { ada: new Set(), bob: new Set() }, shown: { ada: 0, bob: 0 } };
        const real: Real = { topic, conns, refs: 0 };
        try {
          await fc.asyncModelRun(() => ({ model, real }), [...cmds].map((c) => withVerify(c)));
        } finally {
          for (const u of USERS) for (const c of conns[u]) c.close();
        }
      }),
      { defaultRuns: 30, timeLimitMs: 120_000 },
    );
  }, 300_000);
});

/** Runs `cmd`, then checks the model against the system. */
function withVerify(cmd: fc.AsyncCommand<Model, Real>): fc.AsyncCommand<Model, Real> {
  return {
    check: (m) => cmd.check(m),
    run: async (m, r) => {
      await cmd.run(m, r);
      await verify(m, r);
    },
    toString: () => cmd.toString(),
  };
}
