/**
 * Each feed of the engine has one tagged state, changed in one place (engine/feeds.ts), against
 * a real bridge: loading its saved history, saved (read, waiting for the server), subscribed,
 * caught up, refused. The engine reports every change as `{ oldState, newState }`. A feed's
 * history is read again once `welcome` names the principal (the tab named none here).
 */
import { describe, expect, it } from "vitest";
import { ErrorCode } from "@tidemark/shared";
import { ProfileEngine } from "../src/engine/profile-engine.js";
import type { FeedStateChange } from "../src/engine/model.js";
import type { OpenRequest } from "../src/types.js";
import { config, running, startBridge, topic, until, useEngineSuite } from "./engine-fixture.js";

useEngineSuite();

/** A profile engine with one attached tab, recording every feed state change. */
function startEngine(port: number) {
  const changes: FeedStateChange[] = [];
  const engine = new ProfileEngine(config(port), { feedState: (change) => changes.push(change) });
  engine.attach({ id: "t", focused: true, listener: () => undefined, getToken: () => "token-ada", hint: null });
  /** The kinds a feed went through, in order (its first state, then each new one). */
  const kinds = (key: string) => {
    const mine = changes.filter((c) => c.key === key);
    return mine.length === 0 ? [] : [mine[0]!.oldState.kind, ...mine.map((c) => c.newState.kind)];
  };
  return { engine, changes, kinds };
}

const hub = (id: string, tenantId: string): OpenRequest => ({ id, mode: "hub", topic: "engine.feed", tenantId, effects: false });

describe("engine - feed state", () => {
  it("engine - a hub feed goes loading, saved, subscribed, caught up; a lost socket takes it back to saved until it is caught up again", async () => {
    await topic.publish({ tenantId: "acme", data: { n: 1 } });
    const { server } = await startBridge();
    const { engine, kinds, changes } = startEngine(server.port);
    try {
      await engine.open("t", hub("a", "acme"));
      const key = changes[0]!.key;
      await until(() => kinds(key).at(-1) === "caught_up");
      // Read first for a principal not yet known (nothing saved), then for the one `welcome` names.
      expect(kinds(key)).toEqual(["loading", "saved", "loading", "saved", "subscribed", "caught_up"]);
      // Every change starts from the state the previous one ended in.
      for (const [i, change] of changes.entries()) if (i > 0) expect(change.oldState).toEqual(changes[i - 1]!.newState);

      // The bridge goes away and another takes its port: the feed is asked again from saved.
      await Promise.all(running.splice(0).map((r) => r.server.close()));
      await until(() => kinds(key).at(-1) === "saved");
      await startBridge(server.port);
      await until(() => kinds(key).at(-1) === "caught_up");
      expect(kinds(key).slice(6)).toEqual(["saved", "subscribed", "caught_up"]);
    } finally {
      await engine.shutdown();
    }
  });

  it("engine - a forbidden feed goes from saved to refused with the server's code; opened anew it is asked again and refused again", async () => {
    const { server } = await startBridge();
    const { engine, kinds, changes } = startEngine(server.port);
    try {
      await engine.open("t", hub("a", "initech"));
      const key = changes[0]!.key;
      await until(() => kinds(key).at(-1) === "refused");
      expect(kinds(key)).toEqual(["loading", "saved", "loading", "saved", "refused"]);
      const refused = changes.at(-1)!.newState;
      expect(refused.kind === "refused" && refused.error.code).toBe(ErrorCode.Forbidden);
      // A new subscription of the refused feed: asked again, refused again.
      await engine.open("t", hub("b", "initech"));
      await until(() => kinds(key).length === 7);
      expect(kinds(key).slice(5)).toEqual(["saved", "refused"]);
    } finally {
      await engine.shutdown();
    }
  });

  it("engine - a live feed is caught up once the server accepts it", async () => {
    const { server } = await startBridge();
    const { engine, kinds, changes } = startEngine(server.port);
    try {
      await engine.open("t", { ...hub("a", "acme"), mode: "live" });
      const key = changes[0]!.key;
      await until(() => kinds(key).at(-1) === "caught_up");
      expect(kinds(key)).toEqual(["loading", "saved", "loading", "saved", "subscribed", "caught_up"]);
    } finally {
      await engine.shutdown();
    }
  });
});
