/**
 * Where the hooks get their client: one given by the app, or one the provider creates on first
 * use in the browser. Nothing here runs during render, so a server render creates no client.
 */
import type { Client, ClientOptions, FeedSpec } from "@tidemark/client";
import { FeedStore, type FeedMode } from "./feed-store.js";
import { ConnectionStore } from "./connection-store.js";
import type { ClientHandle } from "./client-handle.js";

/** @internal */
export class ClientSource implements ClientHandle {
  private client: Client | undefined;
  private users = 0;
  private closeTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly feeds = new Map<string, FeedStore<unknown>>();
  readonly connection = new ConnectionStore(this);

  /**
   * @param make creates the client on first use
   * @param owned the source closes the client when nobody uses it (false for a client the app made)
   */
  constructor(
    private readonly make: () => Client,
    private readonly owned: boolean,
  ) {}

  static given(client: Client): ClientSource {
    return new ClientSource(() => client, false);
  }

  static create(options: ClientOptions, create: (options: ClientOptions) => Client): ClientSource {
    return new ClientSource(() => create(options), true);
  }

  /** The client, made now if needed. Call from effects and subscriptions, never from render. */
  acquire(): Client {
    clearTimeout(this.closeTimer);
    this.users++;
    this.client ??= this.make();
    return this.client;
  }

  /**
   * Lets go of the client. An owned one closes a tick later, and only if nobody took it again:
   * StrictMode's unmount-and-mount of effects, or a feed swapped for another, keeps it.
   */
  release(): void {
    this.users--;
    if (this.users > 0 || !this.owned) return;
    clearTimeout(this.closeTimer);
    this.closeTimer = setTimeout(() => {
      if (this.users > 0 || !this.client) return;
      this.client.close();
      this.client = undefined;
    }, 0);
  }

  /** The store of one feed, shared by every component that shows it. Pure: opens nothing. */
  feed<T>(mode: FeedMode, topic: string, tenantId: string | undefined, initial?: FeedSpec["initial"]): FeedStore<T> {
    const key = `${mode}\u0000${topic}\u0000${tenantId ?? ""}`;
    let store = this.feeds.get(key);
    if (!store) {
      store = new FeedStore<unknown>(this, mode, topic, tenantId, initial);
      this.feeds.set(key, store);
    }
    return store as FeedStore<T>;
  }
}
