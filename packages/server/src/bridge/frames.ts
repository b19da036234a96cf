/**
 * Parsing and checking of client frames, and serialisation of server frames. Event frames are
 * serialised once per (event, hub) and the same string is sent to every subscriber of the moment.
 */
import type { FrameText } from "./socket.js";
// A frame the bridge cannot accept throws the shared table's ProtocolError: the connection
// answers with an error frame (PROTOCOL_ERROR) and closes with 4400.
import {
  MAX_INITIAL_EVENTS,
  PROTOCOL_VERSION,
  ProtocolError,
  SubscriptionMode,
  type ClientFrame,
  type InitialPage,
  type ServerFrame,
  type TidemarkEvent,
} from "@tidemark/shared";

const MAX_ID = 128;
const MAX_NAME = 256;
const MAX_TOKEN = 8192;
const MAX_REF = 64;

function bad(message: string): never {
  throw new ProtocolError(message);
}

function str(frame: Record<string, unknown>, key: string, max: number, optional = false): string | undefined {
  const value = frame[key];
  if (value === undefined && optional) return undefined;
  if (typeof value !== "string" || value.length === 0 || value.length > max) {
    throw new ProtocolError(`${String(frame.type)}.${key} must be a string of 1..${max} characters`);
  }
  return value;
}

/**
 * `subscribe.cursor`: any string. What it says is the hub's business: a string that is not a
 * cursor of this topic (empty, too long, garbage) is answered by `reset` (invalid_cursor), so a
 * client with a corrupted saved cursor goes on from the head instead of reconnecting in a loop.
 * The frame size limit bounds its length.
 */
function cursorField(frame: Record<string, unknown>): string | undefined {
  const value = frame.cursor;
  if (value === undefined || typeof value === "string") return value;
  throw new ProtocolError("subscribe.cursor must be a string");
}

/**
 * `subscribe.initial` (1.4): `{ last }` (an integer from 1 to MAX_INITIAL_EVENTS) or `{ since }`
 * (ms since the epoch). A bad one is a protocol error: the client checks it before sending.
 */
function initialField(frame: Record<string, unknown>): InitialPage | undefined {
  const v = frame.initial as Record<string, unknown> | undefined;
  if (v === undefined) return undefined;
  if (typeof v === "object" && v !== null) {
    if (typeof v.last === "number" && Number.isSafeInteger(v.last) && v.last >= 1 && v.last <= MAX_INITIAL_EVENTS) return { last: v.last };
    if (v.last === undefined && typeof v.since === "number" && Number.isFinite(v.since)) return { since: v.since };
  }
  throw new ProtocolError(`subscribe.initial must be {last: 1..${MAX_INITIAL_EVENTS}} or {since: ms}`);
}

/** Parses one inbound text frame; throws {@link ProtocolError} for anything but a valid client frame. */
export function parseClientFrame(text: string): ClientFrame {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ProtocolError("malformed JSON");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new ProtocolError("a frame is a JSON object");
  const f = value as Record<string, unknown>;
  switch (f.type) {
    case "hello":
      if (f.v !== PROTOCOL_VERSION) throw new ProtocolError(`unsupported protocol version ${JSON.stringify(f.v)}; this server speaks ${PROTOCOL_VERSION}`);
      return { type: "hello", v: PROTOCOL_VERSION, token: str(f, "token", MAX_TOKEN, true) };
    case "subscribe": {
      const mode = f.mode;
      if (mode !== SubscriptionMode.Hub && mode !== SubscriptionMode.Live) throw new ProtocolError('subscribe.mode must be "hub" or "live"');
      return {
        type: "subscribe",
        id: str(f, "id", MAX_ID)!,
        topic: str(f, "topic", MAX_NAME)!,
        tenantId: str(f, "tenantId", 1024, true),
        mode,
        cursor: cursorField(f),
        initial: initialField(f),
        read: f.read === undefined ? undefined : f.read === true ? true : f.read === false ? false : bad("subscribe.read must be a boolean"),
      };
    }
    case "mark_read": {
      const cursor = f.cursor === undefined ? undefined : typeof f.cursor === "string" ? f.cursor : bad("mark_read.cursor must be a string");
      const item = f.item === undefined ? undefined : typeof f.item === "string" ? f.item : bad("mark_read.item must be a string");
      if ((cursor === undefined) === (item === undefined)) throw new ProtocolError("mark_read takes one of cursor and item");
      return { type: "mark_read", id: str(f, "id", MAX_ID)!, ref: str(f, "ref", MAX_REF)!, cursor, item };
    }
    case "unsubscribe":
      return { type: "unsubscribe", id: str(f, "id", MAX_ID)! };
    case "refresh":
      return { type: "refresh", token: str(f, "token", MAX_TOKEN)! };
    case "ping":
      return { type: "ping" };
    case "pong":
      return { type: "pong" };
    default:
      throw new ProtocolError(`unknown frame type ${JSON.stringify(f.type)}`);
  }
}

/** Serialises a control frame. */
export function encode(frame: ServerFrame): string {
  return JSON.stringify(frame);
}

/** Frame text that is plain ASCII: its UTF-8 wire bytes are as many as its characters. */
const NOT_ASCII = /[\u0080-\uffff]/;

/**
 * Heap a cached frame holds: the text (one byte a character, two when any is outside Latin-1)
 * and the wire bytes a runtime adapter caches beside it (up to three UTF-8 bytes a character).
 * One test for "all ASCII" (exact: 2 bytes a character) instead of a count of each kind.
 */
/** @internal */
export function frameBytes(text: string): number {
  return NOT_ASCII.test(text) ? 5 * text.length : 2 * text.length;
}

/** One cached frame; `frame` is emptied when the cache lets it go. */
interface CachedFrame {
  hub: string;
  frame: FrameText | undefined;
}

/**
 * @internal Serialises event frames once per (event, hub) and keeps the most recent ones, up to
 * `maxBytes` of frames as {@link frameBytes} counts them (the text and the WebSocket message a
 * runtime adapter caches beside it). Not for the event's lifetime: the hubs' windows and the
 * feed backlog hold events for resuming readers, and a frame (text and bytes) kept with each
 * would triple their memory. A frame is wanted again soon after it is made (every socket of the
 * tenant, a reader a little behind); an older one is rebuilt. The cache never holds an event:
 * it is weakly keyed, and the eviction order holds the entries, so an event's decoded data (up
 * to 20 times its JSON length in heap) lives only as long as a hub's window or a reader needs it.
 */
export class EventFrames {
  readonly #cache = new WeakMap<object, CachedFrame>();
  /** The cached frames, oldest first from `#head`, with the bytes each one counts. */
  #order: (CachedFrame | undefined)[] = [];
  #sizes: number[] = [];
  #head = 0;
  #bytes = 0;

  constructor(readonly maxBytes = 4 * 1024 * 1024) {}

  /** Bytes the cached frames count now (at most `maxBytes`, or the one newest frame). */
  get bytes(): number {
    return this.#bytes;
  }

  frame(hub: string, event: TidemarkEvent): FrameText {
    const hit = this.#cache.get(event);
    if (hit?.frame && hit.hub === hub) return hit.frame;
    const frame = { text: `{"type":"event","hub":${JSON.stringify(hub)},"event":${JSON.stringify(event)}}` };
    const entry: CachedFrame = { hub, frame };
    this.#cache.set(event, entry);
    this.#keep(entry, frameBytes(frame.text));
    return frame;
  }

  #keep(entry: CachedFrame, size: number): void {
    this.#order.push(entry);
    this.#sizes.push(size);
    this.#bytes += size;
    while (this.#bytes > this.maxBytes && this.#head < this.#order.length - 1) {
      // The entry stays in the WeakMap (a few words) until its event goes; its frame goes now.
      // An event cached twice (another hub) loses its newer frame early: it is only rebuilt.
      this.#order[this.#head]!.frame = undefined;
      this.#order[this.#head] = undefined;
      this.#bytes -= this.#sizes[this.#head]!;
      this.#head++;
    }
    if (this.#head > 1024 && this.#head * 2 > this.#order.length) {
      this.#order = this.#order.slice(this.#head);
      this.#sizes = this.#sizes.slice(this.#head);
      this.#head = 0;
    }
  }
}
