/**
 * Hostile users cannot exhaust the bridge before authenticating: partial oversized frames are
 * cut at their header, sockets waiting for `hello` are capped per process and per address, and
 * a socket that never says hello is gone soon after `unauthenticatedTimeMs` even when it never
 * answers the close handshake. Real bridge, real sockets; counts read from its /metrics.
 */
import { describe, it, expect } from "vitest";
import { connect as tcp, type Socket } from "node:net";
import { TestClient } from "../bridge/client.js";
import { until } from "@tidemark/testing";
import { bufferedAmounts, FRAME_CUT_CODE, ownTenants, useBridgeFixture } from "../bridge/fixture.js";

const fx = useBridgeFixture();
fx.tokens.set("alice", { id: "alice", tenants: ["a"] });

async function started(limits: Record<string, number> = {}) {
  const sync = fx.sync();
  const topic = sync.topic<number>({ id: "notes" });
  return fx.start({ topics: [{ topic, authorize: ownTenants }], limits, logLevel: "warn" }, sync);
}

/** A gauge of the bridge's own /metrics. */
async function gauge(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  return Number(line?.split(" ")[1]);
}

/**
 * A hand-made WebSocket client: it completes the upgrade and then does only what the test
 * writes — it never answers a close frame. `closedAt` resolves when the server ends the TCP
 * connection.
 */
async function rawSocket(port: number): Promise<{ socket: Socket; received: () => Buffer; closedAt: Promise<number> }> {
  const socket = tcp({ host: "127.0.0.1", port });
  socket.on("error", () => undefined);
  const chunks: Buffer[] = [];
  const closedAt = new Promise<number>((resolve) => socket.once("close", () => resolve(Date.now())));
  await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
  socket.write(
    `GET /ws HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
  );
  await new Promise<void>((resolve, reject) => {
    const onData = (d: Buffer) => {
      chunks.push(d);
      const head = Buffer.concat(chunks).toString("latin1");
      if (!head.includes("\r\n\r\n")) return;
      socket.off("data", onData);
      if (!head.startsWith("HTTP/1.1 101")) reject(new Error(head.split("\r\n")[0]));
      else resolve();
    };
    socket.on("data", onData);
  });
  socket.on("data", (d) => chunks.push(d));
  return { socket, received: () => Buffer.concat(chunks), closedAt };
}

/** The header of a masked TEXT frame announcing `length` bytes (64-bit length form). */
function frameHeader(length: number): Buffer {
  const header = Buffer.alloc(14);
  header[0] = 0x81;
  header[1] = 0x80 | 127;
  header.writeBigUInt64BE(BigInt(length), 2);
  header.writeUInt32BE(0x01020304, 10);
  return header;
}

describe("hostile: exhausting the bridge before hello", () => {
  it("exhaust - a socket sending part of an oversized frame is closed at the frame header (1009) and does not count", async () => {
    const run = await started(); // default limits: maxFrameBytes 16 KiB, unauthenticatedTimeMs 10 s
    const raw = await rawSocket(run.server.port);
    const sent = Date.now();
    raw.socket.write(frameHeader(1024 * 1024));
    raw.socket.write(Buffer.alloc(64 * 1024, 0x41)); // the rest never comes
    const closedAt = await Promise.race([raw.closedAt, new Promise<number>((r) => setTimeout(() => r(Number.POSITIVE_INFINITY), 6_000))]);
    raw.socket.destroy();
    // Before: ws buffered the frame (up to 1 MiB) until the hello deadline, then 30 s more.
    expect(closedAt - sent).toBeLessThan(5_000);
    const closeAt = raw.received().indexOf(0x88);
    // ws answers with a close frame (1009); uWS drops the connection without one (1006).
    if (FRAME_CUT_CODE === 1009) expect(raw.received().readUInt16BE(closeAt + 2)).toBe(1009);
    else expect(closeAt).toBe(-1);
    expect(await gauge(run.server.url, "tidemark_bridge_connections")).toBe(0);
    expect(await gauge(run.server.url, "tidemark_bridge_unauthenticated_connections")).toBe(0);
  });

  it("exhaust - sockets waiting for hello are capped per address (503) and per process (the oldest silent one makes room); a hello frees a place", async () => {
    const run = await started({ maxUnauthenticatedPerAddress: 5 });
    const waiting = await Promise.all(Array.from({ length: 5 }, () => TestClient.open(run.wsUrl)));
    expect(await gauge(run.server.url, "tidemark_bridge_unauthenticated_connections")).toBe(5);
    await expect(TestClient.open(run.wsUrl)).rejects.toMatchObject({ status: 503 });
    // An authenticated connection is not waiting: it leaves the count, and a newcomer gets in.
    waiting[0]!.send({ type: "hello", v: 1, token: "alice" });
    await waiting[0]!.next((f) => f.type === "welcome");
    expect(await gauge(run.server.url, "tidemark_bridge_unauthenticated_connections")).toBe(4);
    const newcomer = await TestClient.open(run.wsUrl);
    await expect(TestClient.open(run.wsUrl)).rejects.toMatchObject({ status: 503 });
    for (const c of [...waiting, newcomer]) c.ws.terminate();
    expect(run.bridge.metrics()).toMatch(/tidemark_bridge_rejected_total\{reason="unauthenticated_connections"\} 2/);

    // A full process cap is not a refusal: the newcomer takes the place of the oldest silent socket.
    const small = await started({ maxUnauthenticated: 3 });
    const three: TestClient[] = [];
    for (let i = 0; i < 3; i++) three.push(await TestClient.open(small.wsUrl));
    const fourth = await TestClient.open(small.wsUrl);
    expect(await three[0]!.closed).toMatchObject({ code: 1013 });
    expect(await gauge(small.server.url, "tidemark_bridge_unauthenticated_connections")).toBe(3);
    expect(small.bridge.metrics()).toMatch(/tidemark_bridge_rejected_total\{reason="unauthenticated_evicted"\} 1/);
    for (const c of [...three, fourth]) c.ws.terminate();
  });

  it("exhaust - a full cap of sockets whose hello is being authenticated refuses the next upgrade (503)", async () => {
    const sync = fx.sync();
    const topic = sync.topic<number>({ id: "notes" });
    // A hello that has arrived keeps its place while authenticate runs (here: never ends).
    let asked = 0;
    const run = await fx.start({ topics: [{ topic, authorize: ownTenants }], limits: { maxUnauthenticated: 3 }, logLevel: "warn", authenticate: () => (asked++, new Promise(() => undefined)) }, sync);
    const three: TestClient[] = [];
    for (let i = 0; i < 3; i++) {
      const c = await TestClient.open(run.wsUrl);
      c.send({ type: "hello", v: 1, token: "slow" });
      three.push(c);
    }
    await until("the hellos arrive", () => asked === 3, 5_000, 20);
    await expect(TestClient.open(run.wsUrl)).rejects.toMatchObject({ status: 503 });
    for (const c of three) expect(c.ws.readyState).toBe(c.ws.OPEN);
    for (const c of three) c.ws.terminate();
  });

  it("exhaust - a socket that never says hello (nor answers the close) is gone soon after unauthenticatedTimeMs", async () => {
    const run = await started({ unauthenticatedTimeMs: 500 });
    const opened = Date.now();
    const raw = await rawSocket(run.server.port);
    const closedAt = await Promise.race([raw.closedAt, new Promise<number>((r) => setTimeout(() => r(Number.POSITIVE_INFINITY), 10_000))]);
    raw.socket.destroy();
    // Before: the close handshake waited 30 s for an answer that never came.
    expect(closedAt - opened).toBeLessThan(500 + 3_000);
    const close = raw.received().subarray(raw.received().indexOf(0x88));
    expect(close.readUInt16BE(2)).toBe(4408);
    await until("the server forgets the socket", () => bufferedAmounts(run.server).length === 0, 2_000, 20);
  }, 20_000);
});
