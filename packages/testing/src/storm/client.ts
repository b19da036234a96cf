/**
 * One user of a crash storm: a raw-protocol WebSocket client with two hub subscriptions (its
 * personal tenant of `notifications`, its group's tenant of `groups`) that follows the browser
 * client's documented reconnect policy (docs/client.md): full-jitter backoff from the shared
 * `backoffDelay` (500 ms base, 15 s cap, back to the first step after a `welcome`), a `drain
 * {retryAfterMs}` honoured on top of it, another bridge on each reconnect (as DNS round robin
 * would hand out), and every hub subscription resumed from its last cursor. It keeps the stream
 * sequences it got per subscription, so lost, doubled and out-of-order events can be counted.
 * Its heartbeat is the browser client's too (protocol 1.5): a `ping` is answered only when the
 * client sent nothing for `PONG_AFTER_BEATS` intervals.
 * The `ws` kind is the raw baseline: a plain socket told its tenants in the URL, no protocol.
 */
import WebSocket from "ws";
import { backoffDelay, PONG_AFTER_BEATS } from "@tidemark/shared";

type Frame = Record<string, unknown> & { type: string };

/** The bridge's ping, recognised without decoding it (a tenth of the frames a client gets). */
const PING_BYTES = Buffer.from('{"type":"ping"}');
const PING: Frame = { type: "ping" };
function isPing(data: WebSocket.RawData): boolean {
  return Buffer.isBuffer(data) && data.length === PING_BYTES.length && data.equals(PING_BYTES);
}

/** The client's reconnect backoff (docs/client.md, `defaultBackoff`). */
const BACKOFF = { baseMs: 500, maxMs: 15_000 };

export const STORM_TOPICS = { personal: "notifications", group: "groups" } as const;

export type StormKind = "tidemark" | "ws";

export interface StormSub {
  readonly id: string;
  readonly topic: string;
  readonly tenantId: string;
  cursor: string | undefined;
  hub: string | undefined;
  caughtUp: boolean;
  /** Stream sequences in the order delivered. */
  readonly sequences: number[];
  outOfOrder: number;
}

export interface StormClientOptions {
  kind: StormKind;
  /** Bridge WebSocket URLs (tidemark: `ws://host:port/ws`; ws: `ws://host:port/`). */
  urls: string[];
  user: string;
  group: string;
  /** Index of the first bridge (client k of a run: k % bridges). */
  first: number;
  localAddress?: string;
  /** Called with publish-to-delivery ms of each event while latency is recorded. */
  onLatency: (ms: number) => void;
}

export class StormClient {
  readonly options: StormClientOptions;
  readonly subs: StormSub[];
  bridge: number;
  /** Sockets lost (not closed by us). */
  reconnects = 0;
  /** Close codes of the sockets lost, counted (1006: refused or dropped without a close frame). */
  readonly closeCodes = new Map<number, number>();
  /** `drain` frames honoured. */
  drains = 0;
  /** When every subscription was last caught up on the current socket (ms since the epoch); 0 while not. */
  readyAt = 0;
  /** When the current socket was opened (connect() called) and welcomed (ms since the epoch; 0: not yet). */
  connectAt = 0;
  welcomeAt = 0;
  /** `reset`, `error` and coded `unsubscribed` frames (should stay empty). */
  readonly troubles: Frame[] = [];
  /** `reset`, `error` and `unsubscribed` frames counted by `type:code` (`reset`: `reset:<reason>`). */
  readonly troubleKinds = new Map<string, number>();
  #ws: WebSocket | undefined;
  #attempt = 0;
  #retryAfterMs: number | undefined;
  #closed = false;
  /** When the current socket last sent a frame, and the heartbeat its `welcome` announced (ms). */
  #lastSent = 0;
  #heartbeatMs = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(options: StormClientOptions) {
    this.options = options;
    this.bridge = options.first;
    const sub = (id: string, topic: string, tenantId: string): StormSub => ({ id, topic, tenantId, cursor: undefined, hub: undefined, caughtUp: false, sequences: [], outOfOrder: 0 });
    this.subs = [sub("p", STORM_TOPICS.personal, options.user), sub("g", STORM_TOPICS.group, options.group)];
  }

  get ready(): boolean {
    return this.readyAt > 0;
  }

  connect(): void {
    if (this.#closed) return;
    const o = this.options;
    const base = o.urls[this.bridge]!;
    const url = o.kind === "ws" ? `${base}?tenant=${o.user}&tenant=${o.group}` : base;
    const ws = new WebSocket(url, { perMessageDeflate: false, localAddress: o.localAddress });
    this.#ws = ws;
    this.readyAt = 0;
    this.connectAt = Date.now();
    this.welcomeAt = 0;
    for (const s of this.subs) {
      s.caughtUp = false;
      s.hub = o.kind === "ws" ? s.tenantId : undefined;
    }
    ws.on("open", () => {
      if (o.kind === "tidemark") this.#send(ws, JSON.stringify({ type: "hello", v: 1, token: `${o.user}|${o.group}` }));
    });
    ws.on("message", (data) => this.#onFrame(ws, isPing(data) ? PING : (JSON.parse(String(data)) as Frame)));
    ws.on("error", () => undefined);
    ws.on("close", (code) => this.#onClose(ws, code));
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#ws?.terminate();
  }

  #onClose(ws: WebSocket, code: number): void {
    if (this.#closed || ws !== this.#ws) return;
    this.closeCodes.set(code, (this.closeCodes.get(code) ?? 0) + 1);
    this.readyAt = 0;
    this.reconnects++;
    const delay = backoffDelay(this.#attempt, BACKOFF) + (this.#retryAfterMs ?? 0);
    this.#attempt++;
    this.#retryAfterMs = undefined;
    // Another bridge, picked at random among the others (a resolver's next address).
    const n = this.options.urls.length;
    if (n > 1) this.bridge = (this.bridge + 1 + Math.floor(Math.random() * (n - 1))) % n;
    this.#timer = setTimeout(() => this.connect(), delay);
  }

  #send(ws: WebSocket, text: string): void {
    this.#lastSent = Date.now();
    ws.send(text);
  }

  #subscribe(ws: WebSocket, s: StormSub): void {
    if (this.#closed || ws !== this.#ws || ws.readyState !== WebSocket.OPEN) return;
    this.#send(ws, JSON.stringify({ type: "subscribe", id: s.id, topic: s.topic, tenantId: s.tenantId, mode: "hub", cursor: s.cursor }));
  }

  #caughtUp(s: StormSub): void {
    s.caughtUp = true;
    if (this.subs.every((x) => x.caughtUp)) this.readyAt = Date.now();
  }

  #onFrame(ws: WebSocket, f: Frame): void {
    switch (f.type) {
      case "welcome":
        this.welcomeAt = Date.now();
        this.#heartbeatMs = Number(f.heartbeatMs) || 0;
        this.#attempt = 0;
        for (const s of this.subs) this.#subscribe(ws, s);
        return;
      case "ping":
        if (Date.now() - this.#lastSent >= this.#heartbeatMs * PONG_AFTER_BEATS) this.#send(ws, '{"type":"pong"}');
        return;
      case "subscribed": {
        const s = this.subs.find((x) => x.id === f.id || (this.options.kind === "ws" && x.tenantId === f.hub));
        if (!s) return;
        s.hub = String(f.hub);
        if (this.options.kind === "ws") this.#caughtUp(s);
        return;
      }
      case "event": {
        const s = this.subs.find((x) => x.hub === f.hub);
        if (!s) return;
        const e = f.event as { cursor?: string; streamSequence: number; publishedAt: number };
        const last = s.sequences.at(-1);
        if (last !== undefined && e.streamSequence <= last) s.outOfOrder++;
        s.sequences.push(e.streamSequence);
        if (e.cursor !== undefined) s.cursor = e.cursor;
        this.options.onLatency(Date.now() - e.publishedAt);
        return;
      }
      case "caught_up": {
        const s = this.subs.find((x) => x.id === f.id);
        if (!s) return;
        s.cursor = String(f.cursor);
        this.#caughtUp(s);
        return;
      }
      case "drain":
        this.drains++;
        this.#retryAfterMs = Number(f.retryAfterMs);
        return;
      case "reset":
      case "error":
      case "unsubscribed": {
        if (this.troubles.length < 20) this.troubles.push(f);
        const kind = `${f.type}:${String(f.code ?? f.reason ?? "-")}`;
        this.troubleKinds.set(kind, (this.troubleKinds.get(kind) ?? 0) + 1);
        const s = this.subs.find((x) => x.id === f.id);
        if (f.type !== "reset" && s && f.code !== "FORBIDDEN" && f.code !== "UNAUTHORIZED") {
          // The subscription ended on the server (broker trouble): subscribe again from the cursor.
          s.hub = undefined;
          s.caughtUp = false;
          this.readyAt = 0;
          setTimeout(() => this.#subscribe(ws, s), backoffDelay(0, BACKOFF));
        }
        return;
      }
      default:
        return;
    }
  }
}
