/**
 * The engine leaves no timer behind on shutdown. A bridge stand-in on a real `ws` server makes
 * the engine arm every timer it has (heartbeat watchdog, token refresh, a subscription retry,
 * the tab sweep, delivery and history batching); a spy beside the real timers counts the ones
 * the client's source started and that are still pending.
 */
import { WebSocketServer, WebSocket as NodeWebSocket } from "ws";
import { afterEach, describe, expect, it } from "vitest";
import { ErrorCode, type ClientFrame, type ServerFrame } from "@tidemark/shared";
import { Engine } from "../src/engine.js";
import type { EngineConfig, TabMessage } from "../src/types.js";

(globalThis as { WebSocket?: unknown }).WebSocket ??= NodeWebSocket;

type Handle = ReturnType<typeof setTimeout>;

/** Timers started by packages/client/src and neither fired (once) nor cleared. */
function spyTimers() {
  const pending = new Map<Handle, string>();
  const real = { setTimeout, setInterval, clearTimeout, clearInterval };
  // The caller of setTimeout/setInterval when it is the client's source (ws's own timers are
  // not: a browser socket has none); the failure message names it.
  const where = (kind: string) => {
    const caller = new Error().stack?.split("\n")[3] ?? "";
    return /packages[\\/]client[\\/]src[\\/]/.test(caller) ? `${kind} ${caller.trim()}` : undefined;
  };
  const g = globalThis as unknown as Record<string, unknown>;
  g.setTimeout = (fn: () => void, ms?: number, ...args: unknown[]) => {
    const track = where("timeout");
    const handle: Handle = real.setTimeout(() => {
      pending.delete(handle);
      fn(...(args as []));
    }, ms);
    if (track) pending.set(handle, track);
    return handle;
  };
  g.setInterval = (fn: () => void, ms?: number, ...args: unknown[]) => {
    const track = where("interval");
    const handle = real.setInterval(fn, ms, ...args);
    if (track) pending.set(handle as unknown as Handle, track);
    return handle;
  };
  g.clearTimeout = (handle: Handle | undefined) => {
    if (handle !== undefined) pending.delete(handle);
    real.clearTimeout(handle);
  };
  g.clearInterval = (handle: Handle | undefined) => {
    if (handle !== undefined) pending.delete(handle);
    real.clearInterval(handle);
  };
  return { pending, restore: () => Object.assign(globalThis, real) };
}

/** Welcomes every socket, refuses every subscription with a retryable error. */
async function refusingBridge() {
  const wss = new WebSocketServer({ port: 0, host: "127.0.0.1" });
  await new Promise((resolve) => wss.once("listening", resolve));
  const subscribes: string[] = [];
  wss.on("connection", (socket) => {
    const send = (frame: ServerFrame) => socket.send(JSON.stringify(frame));
    socket.on("message", (data) => {
      const frame = JSON.parse(String(data)) as ClientFrame;
      if (frame.type === "hello") {
        send({
          type: "welcome",
          v: 1,
          connectionId: "c1",
          heartbeatMs: 1_000,
          limits: { maxFrameBytes: 65_536, maxSubscriptions: 10, subscribeRatePerSecond: 10 },
          expiresAt: Date.now() + 60_000,
          principal: "ada",
        } as ServerFrame);
      } else if (frame.type === "subscribe") {
        subscribes.push(frame.id);
        send({ type: "error", id: frame.id, code: ErrorCode.BrokerUnavailable, message: "broker down" });
      }
    });
  });
  const port = (wss.address() as { port: number }).port;
  return { port, subscribes, close: () => new Promise((resolve) => wss.close(resolve)) };
}

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe("engine - shutdown", () => {
  it("engine - shutdown clears every timer it started", async () => {
    const timers = spyTimers();
    cleanups.push(timers.restore);
    const bridge = await refusingBridge();
    cleanups.push(bridge.close);
    const engine = new Engine();
    const config: EngineConfig = {
      url: `ws://127.0.0.1:${bridge.port}/ws`,
      backoff: { baseMs: 50, maxMs: 300 },
      historyLimit: 100,
      tabTimeoutMs: 60_000,
      connectTimeoutMs: 20_000,
      tokenRefreshMs: 30_000,
      database: "",
      principal: null,
    };
    const messages: TabMessage[] = [];
    await engine.attach({ id: "t1", focused: true }, config, (m) => messages.push(m), () => "token");
    await engine.open("t1", { id: "f1", mode: "hub", topic: "news", tenantId: "acme", effects: false });
    // The refusal arms a retry; wait until the engine has armed it.
    await expect.poll(() => bridge.subscribes.length, { timeout: 5_000 }).toBeGreaterThan(0);
    await expect.poll(() => messages.some((m) => m.type === "snapshot"), { timeout: 5_000 }).toBe(true);
    expect(timers.pending.size).toBeGreaterThan(0);
    await engine.shutdown();
    expect([...timers.pending.values()]).toEqual([]);
  });
});
