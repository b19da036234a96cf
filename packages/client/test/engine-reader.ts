/**
 * The client engine as a reader of the cursor-contract model: one engine (what runs in the
 * SharedWorker) with one tab and one hub feed, over a WebSocket class that records the frames
 * the engine received, so the model knows the newest position the bridge gave it.
 */
import { WebSocket as NodeWebSocket } from "ws";
import type { ServerFrame } from "@tidemark/shared";
import { Engine } from "../src/engine.js";
import { TabView } from "../src/feed-log.js";
import type { EngineConfig, FeedItem, TabMessage } from "../src/types.js";
import { READER_TOKEN } from "../../server/test/conformance/system.js";

type Frame = ServerFrame & Record<string, unknown>;

/** Every frame received by the sockets the engine opened, oldest first, per socket. */
const sockets: Frame[][] = [];

/** `ws` with the browser interface the engine uses, recording what it receives. */
class RecordingWebSocket extends NodeWebSocket {
  constructor(url: string, protocols?: string | string[]) {
    super(url, protocols);
    const frames: Frame[] = [];
    sockets.push(frames);
    this.on("message", (data) => frames.push(JSON.parse(String(data)) as Frame));
  }
}

/** Installs the recording socket class (Node 20 has no WebSocket global). */
export function installRecordingWebSocket(): void {
  (globalThis as { WebSocket?: unknown }).WebSocket = RecordingWebSocket;
}

export class EngineReader {
  readonly engine = new Engine();
  readonly messages: TabMessage[] = [];
  readonly #views = new Map<string, TabView>();
  readonly #shown = new Map<string, FeedItem[]>();
  online = true;
  #firstSocket = 0;

  private constructor(readonly tenant: string) {}

  /** Attaches a tab and opens the hub feed `f` of `tenant` on `topic`. */
  static async open(url: string, topic: string, tenant: string): Promise<EngineReader> {
    const reader = new EngineReader(tenant);
    reader.#firstSocket = sockets.length;
    const config: EngineConfig = { url, backoff: { baseMs: 50, maxMs: 300 }, historyLimit: 1_000, tabTimeoutMs: 600_000, connectTimeoutMs: 20_000, tokenRefreshMs: 0, database: "", principal: null };
    await reader.engine.attach({ id: "t", focused: true }, config, (m) => reader.#receive(m), () => READER_TOKEN);
    await reader.engine.open("t", { id: "f", mode: "hub", topic, tenantId: tenant, effects: false });
    return reader;
  }

  /** What the app shows on a feed: event sequences and gap markers (by reason), in order. */
  shown(sub = "f"): string[] {
    return (this.#shown.get(sub) ?? []).map((i) => (i.kind === "event" ? `${i.event.streamSequence}:${i.event.eventId}` : `gap:${i.reason}`));
  }

  /** Frames of the sockets this engine opened, newest socket last. */
  frames(): Frame[][] {
    return sockets.slice(this.#firstSocket);
  }

  /** The newest position the bridge gave the hub feed: an event cursor, a reset head or a watermark. */
  position(): string | undefined {
    for (const frames of this.frames().reverse()) {
      const hubs = new Set(frames.filter((f) => f.type === "subscribed" && f.mode === "hub").map((f) => f.hub));
      const ids = new Set(frames.filter((f) => f.type === "subscribed" && f.mode === "hub").map((f) => f.id));
      const last = frames.filter((f) => (f.type === "event" && hubs.has(f.hub)) || ((f.type === "caught_up" || f.type === "reset") && ids.has(f.id))).at(-1);
      if (!last) continue;
      if (last.type === "event") return String((last.event as { cursor: string }).cursor);
      return String(last.type === "reset" ? last.head : last.cursor);
    }
    return undefined;
  }

  status(): string | undefined {
    const last = this.messages.filter((m) => m.type === "status").at(-1);
    return last?.type === "status" ? last.status : undefined;
  }

  async setOnline(online: boolean): Promise<void> {
    this.online = online;
    await this.engine.network("t", online);
  }

  async shutdown(): Promise<void> {
    await this.engine.shutdown();
  }

  #receive(m: TabMessage): void {
    this.messages.push(m);
    if (m.type !== "snapshot" && m.type !== "items") return;
    if (m.type === "snapshot" && m.replace) {
      // Another user or a refusal: the snapshot replaces what the tab showed.
      this.#views.delete(m.sub);
      this.#shown.delete(m.sub);
    }
    const view = this.#views.get(m.sub) ?? new TabView();
    this.#views.set(m.sub, view);
    this.#shown.set(m.sub, [...(this.#shown.get(m.sub) ?? []), ...view.accept(m.items)]);
  }
}
