/**
 * A resuming WebSocket subscriber for the fault suites: one socket, one hub subscription. It
 * behaves as the browser client does: on a lost socket it reconnects to the next bridge and
 * resubscribes from its last cursor; on `unsubscribed` with a broker code it subscribes again.
 * It counts every event frame by event id, so lost and doubled events can be told apart.
 */
import WebSocket from "ws";

type Frame = Record<string, unknown> & { type: string };

export interface SubscriberOptions {
  urls: string[];
  token: string;
  topic: string;
  tenantId: string;
  /** Index into `urls` of the first bridge to use. */
  first?: number;
  /** Delay before a reconnect or resubscribe, plus up to as much jitter. @default 200 */
  retryMs?: number;
  /**
   * Treat a socket silent this long as dead and move to the next bridge, as the browser client
   * does after 1.6 heartbeats (a frozen bridge keeps its TCP connections open). Off by default.
   */
  silenceMs?: number;
}

export class ResumingSubscriber {
  readonly options: SubscriberOptions;
  /** event id -> times delivered */
  readonly seen = new Map<string, number>();
  /** event id -> when it was first delivered (ms since the epoch). */
  readonly firstSeenAt = new Map<string, number>();
  /** Close codes of the sockets lost, in order (1006: dropped without a close frame). */
  readonly closeCodes: number[] = [];
  /** Sockets given up as silent (see `silenceMs`). */
  silentDrops = 0;
  /** Stream sequences in the order delivered. */
  readonly sequences: number[] = [];
  readonly resets: Frame[] = [];
  /** `unsubscribed` frames with a code, and `error` frames. */
  readonly troubles: Frame[] = [];
  cursor: string | undefined;
  reconnects = 0;
  resubscribes = 0;
  /** Events delivered out of stream order (must stay 0). */
  outOfOrder = 0;
  #ws: WebSocket | undefined;
  #bridge: number;
  #closed = false;
  #hub: string | undefined;
  #sub = 0;
  #caughtUp: (() => void) | undefined;
  #lastHeard = 0;
  #watchdog: ReturnType<typeof setInterval> | undefined;

  constructor(options: SubscriberOptions) {
    this.options = options;
    this.#bridge = options.first ?? 0;
  }

  /** Connects and subscribes; resolves at the first `caught_up`. */
  start(timeoutMs = 30_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`subscriber ${this.options.token} not caught up in ${timeoutMs} ms; troubles ${JSON.stringify(this.troubles.slice(-3))}`)), timeoutMs);
      this.#caughtUp = () => {
        clearTimeout(timer);
        resolve();
      };
      this.#connect();
    });
  }

  /** Distinct events delivered. */
  get delivered(): number {
    return this.seen.size;
  }

  /** Extra deliveries of an event already delivered. */
  get doubled(): number {
    let n = 0;
    for (const c of this.seen.values()) n += c - 1;
    return n;
  }

  /** The bridge index the socket is on now. */
  get bridge(): number {
    return this.#bridge;
  }

  get connected(): boolean {
    return this.#ws?.readyState === WebSocket.OPEN;
  }

  /** Drops the socket as a lost network would: the subscriber reconnects and resumes by itself. */
  drop(): void {
    this.#ws?.terminate();
  }

  /** Stops reading from the socket for `ms` (a slow reader: the server's send buffer fills). */
  pause(ms: number): void {
    const socket = (this.#ws as unknown as { _socket?: { pause(): void; resume(): void } } | undefined)?._socket;
    if (!socket) return;
    socket.pause();
    setTimeout(() => socket.resume(), ms);
  }

  close(): void {
    this.#closed = true;
    if (this.#watchdog) clearInterval(this.#watchdog);
    this.#ws?.terminate();
  }

  /** Checks for silence a few times per `silenceMs`; a silent socket is terminated (its close moves on). */
  #watch(): void {
    const silenceMs = this.options.silenceMs;
    if (!silenceMs || this.#watchdog) return;
    this.#watchdog = setInterval(() => {
      const ws = this.#ws;
      // A frozen bridge's kernel still accepts TCP: a socket stuck connecting is silent too.
      if (this.#closed || !ws || ws.readyState >= WebSocket.CLOSING) return;
      if (Date.now() - this.#lastHeard > silenceMs) {
        this.silentDrops++;
        ws.terminate();
      }
    }, Math.max(50, silenceMs / 5));
  }

  #retry(fn: () => void): void {
    if (this.#closed) return;
    const base = this.options.retryMs ?? 200;
    setTimeout(fn, base + Math.random() * base);
  }

  #connect(): void {
    if (this.#closed) return;
    const ws = new WebSocket(this.options.urls[this.#bridge]!);
    this.#ws = ws;
    this.#lastHeard = Date.now();
    this.#watch();
    ws.on("open", () => ws.send(JSON.stringify({ type: "hello", v: 1, token: this.options.token })));
    ws.on("message", (data) => {
      this.#lastHeard = Date.now();
      this.#onFrame(ws, JSON.parse(data.toString()) as Frame);
    });
    ws.on("error", () => undefined);
    ws.on("close", (code) => {
      if (this.#closed || ws !== this.#ws) return;
      this.closeCodes.push(code);
      // Go to another bridge, as a load balancer would after a dead backend.
      this.#bridge = (this.#bridge + 1) % this.options.urls.length;
      this.reconnects++;
      this.#retry(() => this.#connect());
    });
  }

  #subscribe(ws: WebSocket): void {
    if (this.#closed || ws !== this.#ws || ws.readyState !== WebSocket.OPEN) return;
    const { topic, tenantId } = this.options;
    this.#sub++;
    ws.send(JSON.stringify({ type: "subscribe", id: `s${this.#sub}`, topic, tenantId, mode: "hub", cursor: this.cursor }));
  }

  #onFrame(ws: WebSocket, f: Frame): void {
    switch (f.type) {
      case "welcome":
        this.#subscribe(ws);
        return;
      case "ping":
        ws.send('{"type":"pong"}');
        return;
      case "subscribed":
        if (f.id === `s${this.#sub}`) this.#hub = String(f.hub);
        return;
      case "event": {
        if (f.hub !== this.#hub) return;
        const e = f.event as { eventId: string; cursor: string; streamSequence: number };
        this.seen.set(e.eventId, (this.seen.get(e.eventId) ?? 0) + 1);
        if (!this.firstSeenAt.has(e.eventId)) this.firstSeenAt.set(e.eventId, Date.now());
        const last = this.sequences.at(-1);
        if (last !== undefined && e.streamSequence <= last) this.outOfOrder++;
        this.sequences.push(e.streamSequence);
        this.cursor = e.cursor;
        return;
      }
      case "caught_up":
        if (f.id !== `s${this.#sub}`) return;
        this.cursor = String(f.cursor);
        this.#caughtUp?.();
        this.#caughtUp = undefined;
        return;
      case "reset":
        this.resets.push(f);
        return;
      case "unsubscribed":
      case "error":
        this.troubles.push(f);
        if (this.troubles.length > 50) this.troubles.splice(0, 10);
        if (f.id === `s${this.#sub}` && f.code !== "FORBIDDEN" && f.code !== "UNAUTHORIZED") {
          // The subscription ended on the server (broker trouble): subscribe again from the cursor.
          this.resubscribes++;
          this.#hub = undefined;
          this.#retry(() => this.#subscribe(ws));
        }
        return;
      default:
        return;
    }
  }
}

/** Sums the counts of many subscribers against what each should have received. */
export function tally(subscribers: ResumingSubscriber[], expected: (s: ResumingSubscriber) => Set<string>) {
  let delivered = 0;
  let lost = 0;
  let doubled = 0;
  let unexpected = 0;
  let resets = 0;
  let outOfOrder = 0;
  for (const s of subscribers) {
    const want = expected(s);
    for (const id of want) if (!s.seen.has(id)) lost++;
    for (const id of s.seen.keys()) if (!want.has(id)) unexpected++;
    delivered += s.delivered;
    doubled += s.doubled;
    resets += s.resets.length;
    outOfOrder += s.outOfOrder;
  }
  return { delivered, lost, doubled, unexpected, resets, outOfOrder };
}
