/**
 * The inbox through the engine (setup in engine-fixture.ts): a first page of history for a feed
 * with no saved state, read state shared by every engine of a user and never by another user's,
 * a read made while the bridge is away sent when it is back, and "mark all read" racing new
 * events hiding none of them.
 */
import { describe, expect, it } from "vitest";
import { Engine } from "../src/engine.js";
import { covers } from "../src/read-log.js";
import type { TabMessage } from "../src/types.js";
import { attachTab, engines, startBridge, topic, until, useEngineSuite } from "./engine-fixture.js";

useEngineSuite();

type Tab = Awaited<ReturnType<typeof attachTab>>;
const lastRead = (tab: Tab, sub: string) =>
  tab.messages.filter((m): m is Extract<TabMessage, { type: "read" }> => m.type === "read" && m.sub === sub).at(-1)?.read;
const live = (tab: Tab) => tab.status()?.type === "status" && (tab.status() as { status: string }).status === "live";

function newEngine(): Engine {
  const engine = new Engine();
  engines.push(engine);
  return engine;
}

describe("engine - inbox", () => {
  it("engine - a feed with no saved state opens with its tenant's last N events, then live, no duplicate at the seam, no effect for the page", async () => {
    const { server } = await startBridge();
    for (let n = 1; n <= 6; n++) {
      await topic.publish({ tenantId: "acme", data: { n } });
      await topic.publish({ tenantId: "globex", data: { n } });
    }
    const latest = topic.cursorSequence((await topic.latestCursor({ tenantId: "acme" }))!);
    const tab = await attachTab(newEngine(), "t", server.port);
    const engine = engines.at(-1)!;
    await engine.open("t", { id: "f", mode: "hub", topic: "engine.feed", tenantId: "acme", effects: true, initial: { last: 3 } });
    await until(() => tab.sequences("f").length === 3 && live(tab));
    const page = tab.sequences("f") as number[];
    expect(page.at(-1)).toBe(latest);
    const r = await topic.publish({ tenantId: "acme", data: { n: 7 } });
    await until(() => tab.sequences("f").length === 4);
    expect(tab.sequences("f")).toEqual([...page, r.streamSequence]);
    const effects = tab.messages.filter((m) => m.type === "items" && m.sub === "f" && m.effects).flatMap((m) => (m.type === "items" ? m.items : []));
    expect(effects.map((i) => (i.kind === "event" ? i.event.streamSequence : 0))).toEqual([r.streamSequence]);
  });

  it("engine - a read on one engine of a user reaches every engine of that user, never another user's", async () => {
    const { server } = await startBridge();
    const e1 = await topic.publish({ tenantId: "acme", data: { n: 1 } });
    const e2 = await topic.publish({ tenantId: "acme", data: { n: 2 } });
    const phone = await attachTab(newEngine(), "p", server.port);
    const laptop = await attachTab(newEngine(), "l", server.port);
    const bobs = await attachTab(newEngine(), "b", server.port, { token: () => "token-bob" });
    const open = { mode: "hub" as const, topic: "engine.feed", tenantId: "acme", effects: false, initial: { last: 10 } };
    await engines[0]!.open("p", { id: "f", ...open });
    await engines[1]!.open("l", { id: "f", ...open });
    await engines[2]!.open("b", { id: "f", ...open });
    await until(() => [phone, laptop, bobs].every((t) => live(t) && lastRead(t, "f") !== undefined));
    await engines[0]!.markRead("p", "f", { cursor: e1.cursor });
    await until(() => covers(lastRead(laptop, "f")?.cursor, e1.cursor));
    await engines[1]!.markRead("l", "f", { item: e2.cursor, eventId: e2.eventId });
    await until(() => lastRead(phone, "f")?.items.includes(e2.eventId) === true);
    expect(await topic.readState({ principal: "ada", tenantId: "acme" }).get()).toMatchObject({ cursor: e1.cursor, items: [e2.eventId] });
    await new Promise((r) => setTimeout(r, 200));
    expect(lastRead(bobs, "f")).toEqual({ items: [] });
    expect((await topic.readState({ principal: "bob", tenantId: "acme" }).get()).version).toBe(0);
  });

  it("engine - a read made while the bridge is away is shown at once and sent when it is back; the server's further cursor wins", async () => {
    const first = await startBridge();
    const port = first.server.port;
    const e1 = await topic.publish({ tenantId: "globex", data: { n: 1 } });
    const e2 = await topic.publish({ tenantId: "globex", data: { n: 2 } });
    const tab = await attachTab(newEngine(), "t", port);
    await engines[0]!.open("t", { id: "f", mode: "hub", topic: "engine.feed", tenantId: "globex", effects: false, initial: { last: 5 } });
    await until(() => live(tab) && lastRead(tab, "f") !== undefined);
    await first.server.close();
    await until(() => !live(tab));
    await engines[0]!.markRead("t", "f", { cursor: e1.cursor });
    expect(covers(lastRead(tab, "f")?.cursor, e1.cursor)).toBe(true);
    await startBridge(port);
    await until(async () => (await topic.readState({ principal: "ada", tenantId: "globex" }).get()).cursor === e1.cursor);
    // Further on the server (another device): that one wins, the engine's older read is not sent back.
    await topic.readState({ principal: "ada", tenantId: "globex" }).markRead(e2.cursor);
    await until(() => lastRead(tab, "f")?.cursor === e2.cursor);
    await engines[0]!.markRead("t", "f", { cursor: e1.cursor });
    expect((await topic.readState({ principal: "ada", tenantId: "globex" }).get()).cursor).toBe(e2.cursor);
  });

  it("engine - read state is per user on a shared profile: ada's read made offline is never shown or sent as bob's, and is sent when ada is back", async () => {
    const first = await startBridge();
    const port = first.server.port;
    const e1 = await topic.publish({ tenantId: "acme", data: { n: 1 } });
    const engine = newEngine();
    const ada = await attachTab(engine, "a", port, { token: () => "token-ada", principal: "ada" });
    const open = { id: "f", mode: "hub" as const, topic: "engine.feed", tenantId: "acme", effects: false, initial: { last: 5 } };
    await engine.open("a", open);
    await until(() => live(ada) && lastRead(ada, "f") !== undefined);
    const before = (await topic.readState({ principal: "ada", tenantId: "acme" }).get()).version;
    await first.server.close();
    await until(() => !live(ada));
    await engine.markRead("a", "f", { cursor: e1.cursor });
    await engine.detach("a");
    // bob signs in on the same profile (the same engine) while the bridge is back.
    await startBridge(port);
    const bob = await attachTab(engine, "b", port, { token: () => "token-bob", principal: "bob" });
    await engine.open("b", open);
    await until(() => live(bob) && lastRead(bob, "f") !== undefined);
    await new Promise((r) => setTimeout(r, 300));
    expect(lastRead(bob, "f")).toEqual({ items: [] });
    expect((await topic.readState({ principal: "bob", tenantId: "acme" }).get()).version).toBe(0);
    expect((await topic.readState({ principal: "ada", tenantId: "acme" }).get()).version).toBe(before);
    // ada back: her saved read goes to the server as hers.
    await engine.detach("b");
    const again = await attachTab(engine, "a2", port, { token: () => "token-ada", principal: "ada" });
    await engine.open("a2", open);
    await until(async () => (await topic.readState({ principal: "ada", tenantId: "acme" }).get()).cursor === e1.cursor);
    await until(() => covers(lastRead(again, "f")?.cursor, e1.cursor));
  });

  it("engine - mark all read racing new events: 0 hidden events in 1,000 rounds", async () => {
    const { server } = await startBridge();
    const tenantId = "acme";
    const tab = await attachTab(newEngine(), "t", server.port);
    const engine = engines[0]!;
    await engine.open("t", { id: "race", mode: "hub", topic: "engine.feed", tenantId, effects: false });
    await until(() => live(tab) && lastRead(tab, "race") !== undefined);
    const shownItems = () =>
      tab.messages.flatMap((m) => ((m.type === "snapshot" || m.type === "items") && m.sub === "race" ? m.items : [])).filter((i) => i.kind === "event");
    await topic.publish({ tenantId, data: { n: 0 } });
    await until(() => shownItems().length === 1);
    const rounds = Number(process.env.TIDEMARK_READ_RACE_ROUNDS ?? 1000);
    const published: string[] = [];
    const readState = topic.readState({ principal: "ada", tenantId });
    let hidden = 0;
    let maxClicked = 0;
    for (let round = 0; round < rounds; round++) {
      // The click marks the newest event the tab shows at that moment while a new one is published.
      const newest = shownItems().at(-1)!;
      if (newest.kind !== "event") throw new Error("not an event");
      maxClicked = Math.max(maxClicked, newest.event.streamSequence);
      const [receipt] = await Promise.all([topic.publish({ tenantId, data: { n: round + 1 } }), engine.markRead("t", "race", { cursor: newest.event.cursor })]);
      published.push(receipt.cursor);
      // What the server holds now: never past what a click was shown, never the event of the round.
      const state = await readState.get();
      if (covers(state.cursor, receipt.cursor)) hidden++;
      if (state.cursor !== undefined) expect(topic.cursorSequence(state.cursor)).toBeLessThanOrEqual(maxClicked);
    }
    // Once every read has reached the server: still none of the events published during a click.
    await until(async () => (await readState.get()).cursor === lastRead(tab, "race")?.cursor, 30_000);
    const state = await readState.get();
    expect(topic.cursorSequence(state.cursor!)).toBe(maxClicked);
    hidden = Math.max(hidden, published.filter((c) => covers(state.cursor, c) && topic.cursorSequence(c) > maxClicked).length);
    console.log(`FIGURES read-race ${JSON.stringify({ rounds, hidden, cursor: topic.cursorSequence(state.cursor!), maxClicked })}`);
    expect(hidden).toBe(0);
  }, 240_000);
});
