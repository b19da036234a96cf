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

export interface Feed {
  key: string;
  request: Pick<OpenRequest, "mode" | "topic" | "tenantId">;
  /** Undefined while the saved history is read. */
  log: FeedLog | undefined;
  loaded: Promise<void>;
  members: Set<Member>;
  caughtUp: boolean;
  /** The server accepted the subscription on this socket (`subscribed`). */
  accepted: boolean;
  /** A refusal that stands until a tab opens the feed again. */
  refused: ErrorPayload | undefined;
}
