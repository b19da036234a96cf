import { afterEach, describe, expect, it, vi } from "vitest";
import { createClient, type Client } from "../index.js";
import { serve } from "./serve.js";
import type { EngineApi, TabMessage } from "../types.js";

/** An engine that pushes `status` messages to the tab that attached, one per task, on demand. */
function pushingEngine() {
  let listener: ((message: TabMessage) => void) | undefined;
  const engine: EngineApi = {
    attach: async (_tab, _config, l) => {
      listener = l;
      l({ type: "status", status: "connecting", tabs: 1 });
    },
    open: async () => undefined,
    close: async () => undefined,
    markRead: async () => undefined,
    heartbeat: async () => true,
    focus: async () => undefined,
    network: async () => undefined,
    visible: async () => undefined,
    detach: async () => undefined,
    stats: async () => ({ tabs: 1, feeds: 0, status: "connecting", socketsOpened: 0, items: 0 }),
  };
  return {
    engine,
    attached: () => listener !== undefined,
    push: async (count: number) => {
      for (let i = 1; i <= count; i++) {
        listener!({ type: "status", status: i % 2 ? "live" : "resuming", tabs: i });
        await new Promise((r) => setTimeout(r, 1));
      }
    },
  };
}

let client: Client | undefined;
let channel: MessageChannel | undefined;
afterEach(() => {
  client?.close();
  channel?.port1.close();
  channel?.port2.close();
});

describe("worker serve", () => {
  it("worker serve - the engine's packets reach the tab one way: the tab sends nothing back per packet", async () => {
    // The tab's SharedWorker port and the worker's end of it: a real MessageChannel with comlink.
    channel = new MessageChannel();
    const worker = pushingEngine();
    serve(worker.engine, channel.port2);
    const states: number[] = [];
    client = createClient({ url: "ws://127.0.0.1:9/ws", transport: "shared-worker", worker: () => ({ port: channel!.port1 }) as unknown as SharedWorker, database: "", heartbeatMs: 60_000 });
    client.onState((s) => states.push(s.tabs));
    await vi.waitFor(() => expect(worker.attached()).toBe(true));
    await vi.waitFor(() => expect(states.at(-1)).toBe(1));
    // Every message between the two sides, either way, while the engine pushes.
    const posted = vi.spyOn(MessagePort.prototype, "postMessage");
    try {
      await worker.push(20);
      await vi.waitFor(() => expect(states.at(-1)).toBe(20));
      // Every push arrived, in order, as one message each: the tab answers none of them (a
      // comlink call would be answered, a second message per packet).
      expect(states.slice(-20)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      expect(posted).toHaveBeenCalledTimes(20);
    } finally {
      posted.mockRestore();
    }
  });
});
