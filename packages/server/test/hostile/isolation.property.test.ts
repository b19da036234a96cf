import { describe, it, expect, beforeAll } from "vitest";
import fc from "fast-check";
import type { Topic } from "../../src/index.js";
import { TestClient } from "../bridge/client.js";
import { ownTenants, useBridgeFixture, type Running } from "../bridge/fixture.js";

const fx = useBridgeFixture();
const TENANTS = ["mine", "theirs", "other"];

let run: Running;
let topics: Topic<{ tenant: string; n: number }>[];
const cursors: string[] = [];
let marker = 0;

beforeAll(async () => {
  fx.tokens.set("eve", { id: "eve", tenants: ["mine"] });
  const sync = fx.sync();
  topics = ["iso.a", "iso.b", "iso.hidden"].map((id) => sync.topic<{ tenant: string; n: number }>({ id }));
  // Events of every tenant on every topic, and their cursors: the pool a hostile client draws from.
  for (const t of topics) for (const tenant of TENANTS) for (let n = 0; n < 3; n++) cursors.push((await t.publish({ data: { tenant, n }, tenantId: tenant })).cursor);
  cursors.push(topics[0]!.cursorAt(0), topics[1]!.cursorAt(999_999));
  run = await fx.start(
    {
      topics: [
        { topic: topics[0]!, authorize: ownTenants },
        { topic: topics[1]!, authorize: ownTenants, name: "iso.b" },
      ],
      limits: { subscribeRatePerSecond: 1_000 },
      logLevel: "warn",
    },
    sync,
  );
});

const action = fc.oneof(
  fc.record({
    type: fc.constant("subscribe" as const),
    topic: fc.oneof({ arbitrary: fc.constantFrom("iso.a", "iso.b"), weight: 4 }, fc.constantFrom("iso.hidden", "nope")),
    tenantId: fc.oneof(
      { arbitrary: fc.constant("mine"), weight: 4 },
      fc.constantFrom("theirs", "other", undefined, "mine\u0000", "MINE", "~bWluZQ", "_", "mine.theirs", "*", ">"),
    ),
    mode: fc.constantFrom("hub", "live"),
    cursor: fc.oneof(fc.constant(undefined), fc.nat().map((i) => cursors[i % cursors.length]), fc.constantFrom("s6t.", "garbage", "s6t.W10.1")),
  }),
  fc.record({ type: fc.constant("unsubscribe" as const), index: fc.nat(10) }),
  fc.record({ type: fc.constant("resubscribe" as const), index: fc.nat(10), cursorIndex: fc.nat() }),
);

describe("hostile: tenant isolation (property)", () => {
  it("isolation - no sequence of subscribe, resume and unsubscribe frames with any cursor yields an event of a tenant the principal may not see", async () => {
    let runs = 0;
    let mineDelivered = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(action, { minLength: 1, maxLength: 8 }), async (actions) => {
        runs++;
        const eve = await TestClient.connect(run.wsUrl, "eve");
        try {
          const sent: { id: string; topic: string; tenantId?: string; mode: string }[] = [];
          for (const a of actions) {
            if (a.type === "subscribe") {
              const id = `s${sent.length}`;
              sent.push({ id, topic: a.topic, tenantId: a.tenantId, mode: a.mode });
              eve.send({ type: "subscribe", id, topic: a.topic, tenantId: a.tenantId, mode: a.mode, cursor: a.mode === "hub" ? a.cursor : undefined });
            } else if (sent.length > 0) {
              const s = sent[a.index % sent.length]!;
              eve.send({ type: "unsubscribe", id: s.id });
              if (a.type === "resubscribe") {
                const id = `s${sent.length}`;
                sent.push({ ...s, id });
                eve.send({ type: "subscribe", ...s, id, cursor: s.mode === "hub" ? cursors[a.cursorIndex % cursors.length] : undefined });
              }
            }
          }
          // Every subscribe is answered; then one new event per (topic, tenant), "mine" last.
          for (const s of sent) await eve.next((f) => (f.type === "subscribed" || f.type === "error") && f.id === s.id).catch(() => undefined);
          const m = ++marker;
          for (const t of topics) for (const tenant of ["theirs", "other", "mine"]) await t.publish({ data: { tenant, n: -m }, tenantId: tenant });
          // Open hub/live subscriptions of "mine" must see the marker: wait for them.
          const open = new Set(eve.log.filter((f) => f.type === "subscribed").map((f) => String(f.hub)));
          for (const f of eve.log) if (f.type === "unsubscribed") open.delete(String(eve.log.find((g) => g.type === "subscribed" && g.id === f.id)?.hub));
          for (const hub of open) {
            await eve.next((f) => f.type === "event" && f.hub === hub && (f.event as { data: { n: number } }).data.n === -m, 5_000).catch(() => undefined);
          }
          await new Promise((r) => setTimeout(r, 50));
          const events = eve.log.filter((f) => f.type === "event").map((f) => f.event as { tenantId?: string; data: { tenant: string } });
          mineDelivered += events.length;
          for (const e of events) {
            expect(e.tenantId).toBe("mine");
            expect(e.data.tenant).toBe("mine");
          }
          const subscribedTo = eve.log.filter((f) => f.type === "subscribed").map((f) => sent.find((s) => s.id === f.id)!);
          for (const s of subscribedTo) expect(s.tenantId).toBe("mine");
        } finally {
          eve.ws.terminate();
        }
      }),
      { numRuns: 50 },
    );
    console.log("FIGURES isolation " + JSON.stringify({ runs, mineDelivered }));
    // The property is not vacuous: the principal's own events did flow.
    expect(mineDelivered).toBeGreaterThan(0);
  });
});
