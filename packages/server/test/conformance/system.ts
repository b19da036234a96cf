/**
 * The real parts one model run drives: a topic with a small byte window on a real nats-server,
 * a second Sync (another process) that can destroy and re-create it, and a bridge on a port
 * that survives restarts.
 */
import { createNodeBridge, expose, hubRegistryOf, WHOLE_TOPIC, type Bridge, type HubMode, type Sync, type Topic } from "../../src/index.js";
import { serveForTest, type Served } from "../bridge/fixture.js";

/** What the suite publishes: a counter and some padding to push the byte window. */
export interface Payload {
  n: number;
  pad?: string;
}

/** The principal of the raw bridge clients; it may read every tenant. */
export const READER_TOKEN = "model-reader";

/**
 * Hubs look at the retained window every 100 ms (default 2 s) so idle watermarks keep up with
 * the suite's small window; see PRESSURE_PACE_MS.
 */
export const HUB_OPTIONS = { windowPollMs: 100, ...hubModeFromEnv() };

/** Hub mode "topic" (the default): one feed per topic in the process, whatever the tenants. */
export const FEED_PER_TOPIC = (HUB_OPTIONS.hubMode ?? "topic") === "topic";

/** `TIDEMARK_MODEL_HUB_MODE=tenant` runs the suite on per-tenant followers; the default is the hubs' own. */
function hubModeFromEnv(): { hubMode?: HubMode } {
  const mode = process.env.TIDEMARK_MODEL_HUB_MODE;
  if (mode === undefined || mode === "") return {};
  if (mode !== "topic" && mode !== "tenant") throw new Error(`TIDEMARK_MODEL_HUB_MODE must be "topic" or "tenant", got ${JSON.stringify(mode)}`);
  return { hubMode: mode };
}

/**
 * While subscriptions are held, retention pressure publishes one padded event per 250 ms: the
 * documented bound of idle watermarks (docs/bridge.md, "Hubs") is a window that does not turn
 * over faster than the hubs look at it. Without held subscriptions pressure comes in a burst.
 */
export const PRESSURE_PACE_MS = 250;

/** A small window: about 6 padded events or 30 plain ones (maxBytes >= payload limit + 4 KiB). */
export const TOPIC_LIMITS = { maxPayloadBytes: 1024, retention: { maxBytes: 6 * 1024 } };

export class System {
  readonly topic: Topic<Payload>;
  /** The same topic as another process declares it (destroys and re-creates it). */
  readonly otherTopic: Topic<Payload>;
  bridge: Bridge | undefined;
  server: Served | undefined;
  #port = 0;

  constructor(
    readonly main: Sync,
    other: Sync,
    readonly id: string,
  ) {
    this.topic = main.topic<Payload>({ id, ...TOPIC_LIMITS });
    this.otherTopic = other.topic<Payload>({ id, ...TOPIC_LIMITS });
  }

  get wsUrl(): string {
    return `ws://127.0.0.1:${this.#port}/ws`;
  }

  /** Starts the bridge (again on the same port after a restart). */
  async startBridge(): Promise<void> {
    const bridge = createNodeBridge<{ id: string }>({
      // The suite's one reader reads every tenant, and the whole topic (its reader "all").
      topics: [expose(this.topic, () => WHOLE_TOPIC)],
      authenticate: (token) => (token === READER_TOKEN ? { id: "reader" } : undefined),
      principalKey: (p) => p.id,
      // One principal for every reader, crowds included (`World.crowd`).
      limits: { maxConnectionsPerPrincipal: 1_000 },
      sync: this.main,
      logLevel: "error",
    });
    this.server = await serveForTest(bridge, { port: this.#port, drainGraceMs: 100 });
    this.#port = this.server.port;
    this.bridge = bridge;
  }

  async stopBridge(): Promise<void> {
    await this.server?.close();
    this.server = undefined;
    this.bridge = undefined;
  }

  /** The retained window as the broker reports it (`first` = last + 1 when nothing is retained). */
  async window(): Promise<{ first: number; last: number } | undefined> {
    const [info] = (await this.main.listTopics({ idPrefix: this.id })).filter((t) => t.id === this.id);
    return info && { first: info.firstSequence, last: info.lastSequence };
  }

  /** What this process reads from the broker now: hub followers and open read consumers. */
  reads(): { followers: number; consumers: number } {
    return { followers: hubRegistryOf(this.main).followerCount, consumers: this.main.stats().consumers };
  }

  async dispose(): Promise<void> {
    await this.stopBridge();
    await this.topic.destroy().catch(() => undefined);
  }
}
