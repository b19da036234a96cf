/** This tab's connection (`client.onState`) as an external store for `useConnection`. */
import type { Client, ClientState, Status } from "@tidemark/client";
import type { ClientHandle } from "./client-handle.js";

/** What `useConnection` returns. */
export interface ConnectionState {
  /** `connecting`, `live`, `resuming`, `offline` or `failed` (see the client's status table). */
  readonly status: Status;
  /** Tabs of this browser profile served by the same connection, this one included; 0 until known. */
  readonly tabs: number;
  /**
   * Why the connection failed, while `status` is `failed`: a `TidemarkError` with `code`
   * `ORIGIN_REFUSED` or `UNAUTHORIZED`. Undefined otherwise.
   */
  readonly error: ClientState["error"];
}

/** Before the client reports, and in a server render. */
export const INITIAL_CONNECTION: ConnectionState = Object.freeze({ status: "connecting", tabs: 0, error: undefined });

/** @internal */
export class ConnectionStore {
  private state: ConnectionState = INITIAL_CONNECTION;
  private readonly listeners = new Set<() => void>();
  private off: (() => void) | undefined;

  constructor(private readonly source: ClientHandle) {}

  readonly getSnapshot = (): ConnectionState => this.state;

  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    if (!this.off) {
      const client: Client = this.source.acquire();
      this.off = client.onState(({ status, tabs, error }) => {
        if (status === this.state.status && tabs === this.state.tabs && error === this.state.error) return;
        this.state = Object.freeze({ status, tabs, error });
        for (const l of [...this.listeners]) l();
      });
    }
    return () => {
      if (!this.listeners.delete(listener) || this.listeners.size > 0) return;
      this.off?.();
      this.off = undefined;
      this.source.release();
    };
  };
}
