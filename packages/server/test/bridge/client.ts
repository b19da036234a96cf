/** A real WebSocket client for the bridge suites: frames are queued and awaited by predicate. */
import WebSocket from "ws";
import type { ClientFrame, ServerFrame } from "@tidemark/shared";

type Frame = ServerFrame & Record<string, unknown>;

export class TestClient {
  readonly ws: WebSocket;
  readonly frames: Frame[] = [];
  /** Every frame ever received, in order. */
  readonly log: Frame[] = [];
  /** When each frame of `log` arrived (Date.now()). */
  readonly logAt: number[] = [];
  /** When the socket opened (Date.now() at the client's `open` event). */
  readonly openedAt = Date.now();
  readonly closed: Promise<{ code: number; reason: string }>;
  /** Binary messages received (the protocol is text frames only: should stay 0). */
  binary = 0;
  #waiters: { match: (f: Frame) => boolean; resolve: (f: Frame) => void }[] = [];

  private constructor(ws: WebSocket) {
    this.ws = ws;
    this.closed = new Promise((resolve) => ws.on("close", (code, reason) => resolve({ code, reason: reason.toString() })));
    ws.on("message", (data, isBinary) => {
      if (isBinary) this.binary++;
      const frame = JSON.parse(data.toString()) as Frame;
      this.log.push(frame);
      this.logAt.push(Date.now());
      if (frame.type === "ping") this.send({ type: "pong" });
      const i = this.#waiters.findIndex((w) => w.match(frame));
      if (i >= 0) this.#waiters.splice(i, 1)[0]!.resolve(frame);
      else this.frames.push(frame);
    });
  }

  /** Opens a socket to `ws://.../ws`; rejects with the HTTP status when the upgrade is refused. */
  static open(url: string, options: { headers?: Record<string, string>; origin?: string } = {}): Promise<TestClient> {
    const ws = new WebSocket(url, { headers: options.headers, origin: options.origin });
    return new Promise((resolve, reject) => {
      ws.once("open", () => resolve(new TestClient(ws)));
      ws.once("unexpected-response", (_req, res) => reject(Object.assign(new Error(`HTTP ${res.statusCode}`), { status: res.statusCode })));
      // `on`, not `once`: ws throws an error event nobody listens to, and the socket may outlive
      // the promise (an error after open goes to close, which `closed` reports).
      ws.on("error", reject);
    });
  }

  /** Opens, says hello with `token`, and waits for `welcome`. */
  static async connect(url: string, token: string, options: { headers?: Record<string, string>; origin?: string } = {}): Promise<TestClient> {
    const client = await TestClient.open(url, options);
    client.send({ type: "hello", v: 1, token });
    await client.next((f) => f.type === "welcome");
    return client;
  }

  send(frame: ClientFrame | Record<string, unknown> | string): void {
    this.ws.send(typeof frame === "string" ? frame : JSON.stringify(frame));
  }

  /** The next frame matching `match` (already queued or yet to come). */
  next(match: (f: Frame) => boolean = () => true, timeoutMs = 10_000): Promise<Frame> {
    const i = this.frames.findIndex(match);
    if (i >= 0) return Promise.resolve(this.frames.splice(i, 1)[0]!);
    return new Promise((resolve, reject) => {
      const waiter = { match, resolve: (f: Frame) => (clearTimeout(timer), resolve(f)) };
      const timer = setTimeout(() => {
        this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
        reject(new Error(`no matching frame in ${timeoutMs} ms; got ${JSON.stringify(this.log.slice(-5))}`));
      }, timeoutMs);
      this.#waiters.push(waiter);
    });
  }

  /** Subscribes and waits for `subscribed` (or throws with the error frame). */
  async subscribe(frame: { id: string; topic: string; tenantId?: string; mode?: "hub" | "live"; cursor?: string }): Promise<Frame> {
    this.send({ type: "subscribe", mode: "hub", ...frame });
    const reply = await this.next((f) => (f.type === "subscribed" || f.type === "error") && f.id === frame.id);
    if (reply.type === "error") throw Object.assign(new Error(String(reply.message)), { frame: reply });
    return reply;
  }

  /** Waits until `n` event frames of `hub` have been received in total; returns their data. */
  async events(hub: string, n: number, timeoutMs = 15_000): Promise<Frame[]> {
    const end = Date.now() + timeoutMs;
    while (this.log.filter((f) => f.type === "event" && f.hub === hub).length < n) {
      if (Date.now() > end) throw new Error(`got ${this.log.filter((f) => f.type === "event" && f.hub === hub).length} of ${n} events`);
      await new Promise((r) => setTimeout(r, 20));
    }
    return this.log.filter((f) => f.type === "event" && f.hub === hub);
  }

  close(): void {
    this.ws.close();
  }
}
