/** @internal What the engine holds per tab and per feed (see profile-engine.ts). */
import type { ErrorPayload } from "@tidemark/shared";
import type { FeedLog } from "../feed-log.js";
import type { TokenProvider } from "./tokens.js";
import type { OpenRequest, TabMessage } from "../types.js";

export interface Tab {
  id: string;
  listener: (message: TabMessage) => void;
  getToken: TokenProvider | undefined;
  /** The user the tab's app says is signed in (`EngineConfig.principal`). */
  hint: string | null;
  focused: boolean;
  focusedAt: number;
  order: number;
  lastSeen: number;
  subs: Map<string, Member>;
  lastStatus: string;
}

export interface Member {
  tab: Tab;
  subId: string;
  effects: boolean;
  /** The snapshot was sent; later items go out as pushes. */
  ready: boolean;
  /** Snapshots sent to this member: a later one replaces what the tab shows. */
  snapshots: number;
  feed: Feed;
}

/**
 * @internal Where a feed is, as one tagged state; only `Feeds` (feeds.ts) changes it.
 * - `loading`: its saved history is being read (no log yet).
 * - `saved`: the saved history is read; the server has not accepted the feed on this socket.
 *   It is shown only while the server cannot be asked, or (`shown`) while the server is asked
 *   again after a busy answer or an expired token.
 * - `subscribed`: the server accepted the subscription; the replay is under way.
 * - `caught_up`: at the live edge.
 * - `refused`: a final refusal, standing until a tab opens the feed anew.
 */
export type FeedState =
  | { kind: "loading" }
  | { kind: "saved"; shown: boolean }
  | { kind: "subscribed" }
  | { kind: "caught_up" }
  | { kind: "refused"; error: ErrorPayload };

/** @internal A feed's state changed (the engine reports each change to its `feedState` hook). */
export interface FeedStateChange {
  key: string;
  oldState: FeedState;
  newState: FeedState;
}

export interface Feed {
  readonly key: string;
  /** `initial`: the first opener's first page, used only while the feed has no saved cursor. */
  readonly request: Pick<OpenRequest, "mode" | "topic" | "tenantId" | "initial">;
  /** Undefined exactly while the state is `loading`. */
  readonly log: FeedLog | undefined;
  readonly loaded: Promise<void>;
  readonly members: Set<Member>;
  readonly state: FeedState;
}

/** @internal The refusal that stands for the feed, if any. */
export function refusalOf(feed: Feed): ErrorPayload | undefined {
  return feed.state.kind === "refused" ? feed.state.error : undefined;
}
