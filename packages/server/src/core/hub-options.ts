/**
 * The settings of a Sync's hubs. Declared here, in the core, because `createSync({ hubs })` takes
 * them; the hub layer (hub/registry.ts) implements them. The core never imports the hub layer.
 */
import type { TidemarkEvent } from "@tidemark/shared";

/**
 * How a topic's hubs read the broker. "topic": one whole-topic consumer per topic per process,
 * shared by every tenant (consumers grow with topics, not tenants; each process receives the
 * whole topic). "tenant": one tenant-filtered consumer per (topic, tenant) with subscribers
 * (each process receives only its tenants' events). See docs/deployment.md for where it turns.
 */
export type HubMode = "topic" | "tenant";

/** Settings of every hub of a registry. */
export interface HubRegistryOptions {
  /** Recent events each hub keeps in memory for subscribers that resume a little behind. @default 512 */
  ringEvents?: number;
  /**
   * Byte bound of that window, by `sizeOf`: the heap its events hold, not their JSON length (a
   * window may exceed it by its one newest event when that alone is larger). @default 1 MiB
   */
  ringBytes?: number;
  /**
   * A fresh hub starts its follower at its first subscriber's cursor when that cursor is at most
   * this many stream sequences behind the head (otherwise at the head). @default 20000
   */
  maxBackfillSequences?: number;
  /**
   * Longest time an idle hub goes without a fresh watermark while the topic moves on (other
   * tenants publish): its subscribers then get a newer `onCaughtUp` / `caught_up`. Each hub's
   * refresh falls at a point of its own in the second half of the interval (counted from the last
   * look that found its watermark at the head), so a topic's idle hubs are not all refreshed at
   * once when it moves after a quiet spell. @default 60000
   */
  watermarkIntervalMs?: number;
  /**
   * How often the registry reads each topic's retained window (one stream-info request per topic
   * with running hubs, shared by all of them): a hub whose watermark the window's front is
   * approaching gets a fresh one at once, and a topic destroyed and re-created elsewhere is
   * noticed. @default 2000
   */
  windowPollMs?: number;
  /**
   * What an event counts against `ringBytes` and `feedBacklogBytes`; called once per event as it
   * arrives (the backlog and the window it is handed to share the event object), and again for an
   * event a resuming hub takes from the backlog. The default is an estimate of the heap the
   * decoded event holds, at least what V8 allocates for any payload shape (`[{},{},…]` costs 21
   * times its JSON length) and never less than its JSON length, plus 320 bytes
   * (docs/bridge.md, "Security model"). A custom one must not under-count, or hostile payloads
   * hold more than the bounds say; a size that is not a finite number >= 0 ends the hubs that
   * read the event with `InvalidArgumentError`. @default heap estimate (hub/size-estimate.ts)
   */
  sizeOf?: (event: TidemarkEvent) => number;
  /** Hub mode of every topic, or a choice per topic id. @default "topic" */
  hubMode?: HubMode | ((topicId: string) => HubMode);
  /**
   * Follower catch-up replays (short-lived tenant-filtered consumers, one per resuming tenant)
   * running at once in mode "topic": a resume storm after a restart queues behind this many.
   * @default 64
   */
  maxCatchUps?: number;
  /**
   * Byte bound (by `sizeOf`) of each topic feed's backlog in mode "topic": the recent events,
   * indexed by tenant, that resuming subscribers catch up from with no read of their own. It
   * fills on a busy topic and stays full, in every bridge process, so it is a steady cost per
   * exposed topic. 8 MiB holds about 11,500 events of a 230-character record (its estimate is
   * ~700 bytes: what it holds decoded) or 1,900 of 4 KB strings; raise it for resume storms of
   * more tenants. @default 8 MiB
   */
  feedBacklogBytes?: number;
  /**
   * Least time between two head reads of a topic (one broker request each). Subscribers that
   * resume with a cursor each need a head read that started after they subscribed; those that
   * arrive together share one, and reads start at most one at a time and this far apart, so a
   * resume storm costs a few dozen requests rather than one per subscriber, each waiting at most
   * about this long more. Live-only subscribers skip the spacing. @default 25
   */
  headReadSpacingMs?: number;
}
