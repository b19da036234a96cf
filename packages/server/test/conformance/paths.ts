/**
 * The read paths a saved cursor can resume through, each reduced to what it delivered and what
 * it reported: `replay`, `follow`, `hub().subscribe` (in-process) and a raw protocol client on
 * the bridge. A held reader keeps a hub or bridge subscription open across commands.
 */
import type { TidemarkEvent } from "../../src/index.js";
import { TestClient } from "../bridge/client.js";
import type { Expectation } from "./model.js";
import { Pump, sleep } from "./pump.js";
import { READER_TOKEN, type Payload, type System } from "./system.js";

export type Path = "replay" | "follow" | "hub" | "bridge";
export type HeldPath = "hub" | "bridge";

/** What a reader saw: its events in order, and the gap, mismatch or error it reported. */
export interface Observed {
  events: TidemarkEvent<Payload>[];
  /** `none`, `gap`, `mismatch`, `invalid`, or `error <code>: <message>`. */
  report: string;
  /** Bridge only: the head of a `reset`. */
  resetHead?: string;
  /** Bridge only: the newest `caught_up` watermark. */
  caughtUp?: string;
}

/** Generous bounds: the CI machine has two cores shared with other suites. */
export const WAIT_MS = 10_000;
/** How long a reader that expects nothing (more) listens before it concludes nothing comes. */
export const QUIET_MS = 250;

export function reportOf(err: (Error & { code?: string }) | undefined): string {
  if (err === undefined) return "none";
  if (err.code === "RETENTION_GAP") return "gap";
  if (err.code === "CURSOR_MISMATCH") return "mismatch";
  if (err.code === "INVALID_CURSOR") return "invalid";
  return `error ${err.code ?? err.name}: ${err.message}`;
}

const RESET_REPORTS: Record<string, string> = { retention_gap: "gap", cursor_mismatch: "mismatch", invalid_cursor: "invalid" };

/** Resumes once from `after` through `path`, reads until caught up, and stops. */
export async function resume(system: System, path: Path, tenant: string | undefined, after: string, expected: Expectation): Promise<Observed> {
  if (path === "replay") {
    const events: TidemarkEvent<Payload>[] = [];
    try {
      for await (const e of system.topic.replay({ after, tenantId: tenant })) events.push(e);
      return { events, report: "none" };
    } catch (err) {
      return { events, report: reportOf(err as Error) };
    }
  }
  if (path === "bridge") {
    const held = await HeldReader.open(system, "bridge", tenant, after);
    try {
      return held.observed();
    } finally {
      await held.close();
    }
  }
  const pump = new Pump<Payload>((signal) =>
    path === "follow"
      ? system.topic.follow({ after, tenantId: tenant, signal })
      : system.topic.hub({ tenantId: tenant }).subscribe({ after, signal }),
  );
  const n = expected.kind === "events" ? expected.events.length : 0;
  await pump.settle(n, WAIT_MS, n === 0 ? QUIET_MS * 2 : QUIET_MS);
  await pump.stop();
  return { events: pump.events, report: reportOf(pump.error) };
}

/** A hub or bridge subscription left open across commands. */
export class HeldReader {
  #pump: Pump<Payload> | undefined;
  #client: TestClient | undefined;
  #hub = "";

  private constructor(
    readonly path: HeldPath,
    readonly tenant: string | undefined,
  ) {}

  /** Subscribes from `after`; a bridge subscription is returned once it said `caught_up` (or reset). */
  static async open(system: System, path: HeldPath, tenant: string | undefined, after: string): Promise<HeldReader> {
    const held = new HeldReader(path, tenant);
    if (path === "hub") {
      held.#pump = new Pump<Payload>((signal) => system.topic.hub({ tenantId: tenant }).subscribe({ after, signal }));
      return held;
    }
    const client = await TestClient.connect(system.wsUrl, READER_TOKEN);
    held.#client = client;
    client.send({ type: "subscribe", id: "r", mode: "hub", topic: system.id, tenantId: tenant, cursor: after });
    // Any error frame answers (a refused cursor string would come without the id).
    const reply = await client.next((f) => (f.type === "subscribed" && f.id === "r") || f.type === "error", WAIT_MS).catch(() => undefined);
    if (reply?.type !== "subscribed") return held;
    held.#hub = String(reply.hub);
    await client.next((f) => f.type === "caught_up" || f.type === "unsubscribed", WAIT_MS).catch(() => undefined);
    return held;
  }

  /** Events since the newest `reset` (a bridge subscription goes on after the reset's head). */
  get events(): TidemarkEvent<Payload>[] {
    if (this.#pump) return this.#pump.events;
    return this.#eventsOf(this.#client!.log.slice(this.#lastReset() + 1));
  }

  /** Resets so far (a hub subscription's mismatch or gap ends it: at most one). */
  resets(): number {
    if (this.#pump) return this.#pump.error ? 1 : 0;
    return this.#client!.log.filter((f) => f.type === "reset").length;
  }

  /** Events delivered before the newest `reset`, since the one before it. */
  eventsBeforeReset(): TidemarkEvent<Payload>[] {
    if (this.#pump) return this.#pump.events;
    const log = this.#client!.log;
    const i = this.#lastReset();
    if (i < 0) return this.#eventsOf(log);
    return this.#eventsOf(log.slice(log.findLastIndex((f, j) => j < i && f.type === "reset") + 1, i));
  }

  /**
   * Waits until `n` events arrived (or the reader reported something), then a moment for extras.
   * With `reported`, waits for the report even when no event is due: a hub subscription reports
   * its gap or mismatch from iteration, some time after it was opened.
   */
  async settle(n: number, report = "none", reported = false): Promise<void> {
    const end = Date.now() + WAIT_MS;
    const waiting = () => this.observed().report === report && (this.events.length < n || reported);
    while (waiting() && Date.now() < end) await sleep(20);
    await sleep(n === this.events.length ? 50 : 0);
  }

  observed(): Observed {
    if (this.#pump) return { events: this.#pump.events, report: reportOf(this.#pump.error) };
    const log = this.#client!.log;
    const reset = log[this.#lastReset()];
    const ended = log.find((f) => f.type === "unsubscribed" || f.type === "error");
    const caughtUp = log.filter((f) => f.type === "caught_up").at(-1);
    let report = reset ? (RESET_REPORTS[String(reset.reason)] ?? `reset ${String(reset.reason)}`) : "none";
    if (ended) report = `error ${String(ended.code)}: ${String(ended.message)}`;
    else if (!caughtUp) report = report === "none" ? "error: no caught_up" : report;
    return {
      events: this.events,
      report,
      resetHead: reset ? String(reset.head) : undefined,
      caughtUp: caughtUp ? String(caughtUp.cursor) : undefined,
    };
  }

  #lastReset(): number {
    return this.#client!.log.findLastIndex((f) => f.type === "reset");
  }

  #eventsOf(frames: { type: string; hub?: unknown; event?: unknown }[]): TidemarkEvent<Payload>[] {
    return frames.filter((f) => f.type === "event" && f.hub === this.#hub).map((f) => f.event as TidemarkEvent<Payload>);
  }

  /** The newest position the reader was given: its last event's cursor or a newer watermark. */
  position(): string | undefined {
    if (this.#pump) return this.#pump.events.at(-1)?.cursor;
    const last = this.#client!.log.filter((f) => (f.type === "event" && f.hub === this.#hub) || f.type === "caught_up" || f.type === "reset").at(-1);
    if (!last) return undefined;
    if (last.type === "event") return String((last.event as TidemarkEvent).cursor);
    return String(last.type === "reset" ? last.head : last.cursor);
  }

  async close(): Promise<void> {
    await this.#pump?.stop();
    if (this.#client) {
      this.#client.ws.terminate();
      await this.#client.closed;
    }
  }
}
