import { wrap } from "comlink";
import { afterAll, describe, expect, it } from "vitest";
import { forwardCalls } from "./engine-calls.js";
import { serve } from "./engine/serve.js";
import type { EngineApi, EngineStats } from "./types.js";

const stats: EngineStats = { tabs: 2, feeds: 1, status: "live", socketsOpened: 1, items: 3 };

/** Each call of an EngineApi method but attach, with its arguments and what the engine answers. */
const calls: [Exclude<keyof EngineApi, "attach">, unknown[], unknown][] = [
  ["open", ["t1", { id: "s1", mode: "hub", topic: "notes", tenantId: "acme", effects: false }], undefined],
  ["close", ["t1", "s1"], undefined],
  ["markRead", ["t1", "s1", { item: "s6t.x.1", eventId: "e1" }], undefined],
  ["heartbeat", ["t1"], true],
  ["focus", ["t1", true], undefined],
  ["network", ["t1", false], undefined],
  ["visible", ["t1"], undefined],
  ["detach", ["t1"], undefined],
  ["stats", [], stats],
];

/** An engine that records what reaches it. */
function recordingEngine() {
  const seen: [string, unknown[]][] = [];
  const record =
    <T>(method: string, answer: T) =>
    async (...args: unknown[]): Promise<T> => (seen.push([method, args]), answer);
  const engine: EngineApi = {
    attach: record("attach", undefined),
    open: record("open", undefined),
    close: record("close", undefined),
    markRead: record("markRead", undefined),
    heartbeat: record("heartbeat", true),
    focus: record("focus", undefined),
    network: record("network", undefined),
    visible: record("visible", undefined),
    detach: record("detach", undefined),
    stats: record("stats", stats),
  };
  return { engine, seen };
}

// A real MessageChannel with comlink, as between a tab and the SharedWorker.
const channel = new MessageChannel();
afterAll(() => {
  channel.port1.close();
  channel.port2.close();
});

describe("engine calls", () => {
  it("engine calls - every call but attach reaches the SharedWorker's engine with its arguments and answers", async () => {
    const { engine, seen } = recordingEngine();
    serve(engine, channel.port2);
    const remote = wrap<EngineApi>(channel.port1 as never) as unknown as EngineApi;
    for (const [method, args, answer] of calls) {
      expect(await (remote[method] as (...a: unknown[]) => Promise<unknown>)(...args)).toEqual(answer);
    }
    expect(seen).toEqual(calls.map(([method, args]) => [method, args]));
  });

  it("engine calls - the leader's forwarders send every call but attach by name with its arguments", async () => {
    const sent: [string, unknown[]][] = [];
    const forwarded = forwardCalls(async (method, args) => (sent.push([method, args]), method));
    expect(Object.keys(forwarded).sort()).toEqual(calls.map(([method]) => method).sort());
    for (const [method, args] of calls) {
      expect(await (forwarded[method] as (...a: unknown[]) => Promise<unknown>)(...args)).toBe(method);
    }
    expect(sent).toEqual(calls.map(([method, args]) => [method, args]));
  });
});
