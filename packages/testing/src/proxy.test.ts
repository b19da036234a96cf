import { describe, it, expect, afterEach } from "vitest";
import { createServer, connect, type Server, type Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { FaultProxy } from "./proxy.js";

/** A target that records what each connection sent and keeps the sockets to answer on. */
async function target(): Promise<{ server: Server; port: number; sockets: Socket[]; received: () => string }> {
  const sockets: Socket[] = [];
  let text = "";
  const server = createServer((s) => {
    sockets.push(s);
    s.on("data", (d) => (text += String(d)));
    s.on("error", () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { server, port: (server.address() as { port: number }).port, sockets, received: () => text };
}

async function client(port: number): Promise<{ socket: Socket; received: () => string; closed: Promise<void> }> {
  const socket = connect({ port, host: "127.0.0.1" });
  let text = "";
  socket.on("data", (d) => (text += String(d)));
  socket.on("error", () => undefined);
  const closed = new Promise<void>((r) => socket.once("close", () => r()));
  await new Promise<void>((r, j) => socket.once("connect", r).once("error", j));
  return { socket, received: () => text, closed };
}

async function waitFor(check: () => boolean, ms = 3_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await sleep(10);
  }
}

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

async function setup(o: { maxFaultMs?: number } = {}) {
  const t = await target();
  const proxy = await FaultProxy.start({ targetPort: t.port, ...o });
  cleanup.push(() => new Promise<void>((r) => t.server.close(() => r())), () => {
    for (const s of t.sockets) s.destroy();
  }, () => proxy.close());
  return { t, proxy };
}

// Real sockets on a shared, loaded machine: generous bounds, no speed asserted.
describe("FaultProxy", { timeout: 20_000 }, () => {
  it("proxy - forwards both ways unchanged on 127.0.0.1", async () => {
    const { t, proxy } = await setup();
    const c = await client(proxy.port);
    c.socket.write("hello");
    await waitFor(() => t.received() === "hello");
    t.sockets[0]!.write("world");
    await waitFor(() => c.received() === "world");
    expect(proxy.open).toBe(1);
  });

  it("proxy - a cut holds bytes both ways and delivers them in order at heal; a connection made during the cut waits", async () => {
    const { t, proxy } = await setup();
    const c = await client(proxy.port);
    c.socket.write("a");
    await waitFor(() => t.received() === "a");
    proxy.cut();
    c.socket.write("b");
    c.socket.write("c");
    t.sockets[0]!.write("x");
    const late = await client(proxy.port); // accepted by the proxy, not joined to the target
    late.socket.write("L");
    await sleep(300);
    expect(t.received()).toBe("a");
    expect(c.received()).toBe("");
    expect(t.sockets).toHaveLength(1);
    proxy.heal();
    await waitFor(() => t.received().length === 4 && c.received() === "x");
    expect(t.received().replace("L", "")).toBe("abc");
    expect(t.sockets).toHaveLength(2);
  });

  it("proxy - a one-way cut holds only that direction", async () => {
    const { t, proxy } = await setup();
    const c = await client(proxy.port);
    await waitFor(() => t.sockets.length === 1);
    proxy.cut({ direction: "up" });
    c.socket.write("up");
    t.sockets[0]!.write("down");
    await waitFor(() => c.received() === "down");
    await sleep(200);
    expect(t.received()).toBe("");
    proxy.heal();
    await waitFor(() => t.received() === "up");
  });

  it("proxy - a cut heals by itself after forMs, and never lasts past maxFaultMs", async () => {
    const { t, proxy } = await setup({ maxFaultMs: 400 });
    const c = await client(proxy.port);
    await waitFor(() => t.sockets.length === 1);
    const started = Date.now();
    proxy.cut({ forMs: 60_000 }); // capped at 400 ms
    c.socket.write("z");
    await waitFor(() => t.received() === "z", 5_000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(350);
    expect(proxy.isCut).toBe(false);
  });

  it("proxy - a reset cut ends the connections and refuses new ones until healed", async () => {
    const { t, proxy } = await setup();
    const c = await client(proxy.port);
    await waitFor(() => t.sockets.length === 1);
    proxy.cut({ reset: true });
    await c.closed;
    const refused = connect({ port: proxy.port, host: "127.0.0.1" });
    const outcome = await new Promise<string>((r) => {
      refused.once("error", (e: NodeJS.ErrnoException) => r(e.code ?? "error"));
      refused.once("close", () => r("closed"));
    });
    expect(["ECONNRESET", "closed"]).toContain(outcome);
    expect(t.sockets).toHaveLength(1);
    proxy.heal();
    const again = await client(proxy.port);
    again.socket.write("back");
    await waitFor(() => t.received() === "back");
  });

  it("proxy - delay and jitter postpone every chunk and keep their order", async () => {
    const { t, proxy } = await setup();
    const c = await client(proxy.port);
    await waitFor(() => t.sockets.length === 1);
    proxy.delay(150, 100, { direction: "up" });
    const started = Date.now();
    const sent = Array.from({ length: 50 }, (_, i) => `${i};`).join("");
    for (let i = 0; i < 50; i++) {
      c.socket.write(`${i};`);
      await sleep(2);
    }
    await waitFor(() => t.received().length >= sent.length, 4_000);
    expect(t.received()).toBe(sent);
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);
    // The other direction is not delayed: its bytes overtake a chunk sent upward at the same time.
    proxy.delay(3_000, 0, { direction: "up" });
    c.socket.write("slow");
    t.sockets[0]!.write("fast");
    await waitFor(() => c.received() === "fast");
    expect(t.received()).toBe(sent);
    await waitFor(() => t.received() === sent + "slow", 8_000);
  });

  it("proxy - drop discards a share of the bytes, or of whole chunks", async () => {
    const { t, proxy } = await setup();
    const c = await client(proxy.port);
    await waitFor(() => t.sockets.length === 1);
    proxy.drop(0.5);
    const chunk = "y".repeat(10_000);
    c.socket.write(chunk);
    let got = -1;
    await waitFor(() => {
      const now = t.received().length;
      const settled = now === got && now > 0;
      got = now;
      return settled;
    }, 5_000).catch(() => undefined);
    await sleep(200);
    got = t.received().length;
    expect(got).toBeGreaterThan(3_000);
    expect(got).toBeLessThan(7_000);
    proxy.drop(1, { unit: "chunks" });
    c.socket.write("gone");
    await sleep(200);
    expect(t.received().length).toBe(got);
    expect(() => proxy.drop(2)).toThrow(RangeError);
  });

  it("proxy - drop with reset ends the connection at the first drop instead of passing on a damaged stream", async () => {
    const { t, proxy } = await setup();
    const c = await client(proxy.port);
    await waitFor(() => t.sockets.length === 1);
    proxy.drop(1, { reset: true });
    c.socket.write("never");
    await c.closed;
    expect(t.received()).toBe("");
  });

  it("proxy - close ends every connection and the listener", async () => {
    const t = await target();
    cleanup.push(() => new Promise<void>((r) => t.server.close(() => r())));
    const proxy = await FaultProxy.start({ targetPort: t.port });
    const c = await client(proxy.port);
    await waitFor(() => t.sockets.length === 1);
    const targetClosed = new Promise<void>((r) => t.sockets[0]!.once("close", () => r()));
    await proxy.close();
    await c.closed;
    await targetClosed;
    const refused = await new Promise<string>((r) => connect({ port: proxy.port, host: "127.0.0.1" }).once("error", (e: NodeJS.ErrnoException) => r(e.code ?? "")));
    expect(refused).toBe("ECONNREFUSED");
  });
});
