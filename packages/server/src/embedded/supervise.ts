/**
 * Supervision of the embedded nats-server: when it dies under a running application (a crash,
 * an OOM kill, an operator's kill -9), it is started again on the same client port and store,
 * so the NATS client reconnects to the same URL and nothing retained is lost. Restarts back off
 * and stop after `maxRestarts` failures in a row: a server that cannot start (disk full, store
 * unwritable) does not become a crash loop.
 */
import type { NatsCredentials } from "./credentials.js";
import { startEmbeddedNats, type Durability, type EmbeddedNats, type EmbeddedNatsOptions } from "./server.js";

export interface SupervisedNatsOptions extends EmbeddedNatsOptions {
  /** Failed restarts in a row before giving up. @default 5 */
  maxRestarts?: number;
  /** First restart delay; doubles per failure up to 8 s. @default 250 */
  restartDelayMs?: number;
  /** Told of each restart and of giving up (for logs). @default writes one line to stderr */
  onEvent?: (event: { type: "restarted" | "restart-failed" | "gave-up"; pid?: number; error?: unknown }) => void;
}

/** A managed nats-server that is started again when it dies. */
export interface SupervisedNats {
  readonly url: string;
  readonly wsUrl: string | undefined;
  readonly maxFileStore: number;
  readonly dataDir: string;
  readonly binary: string;
  readonly version: string;
  readonly durability: Durability;
  /** The data directory's credentials (the same across restarts). */
  readonly credentials: NatsCredentials | undefined;
  /** The pid of the current server process. */
  readonly pid: number;
  /** Restarts so far. */
  readonly restarts: number;
  stop(graceMs?: number): Promise<void>;
}

const defaultEvent: NonNullable<SupervisedNatsOptions["onEvent"]> = (e) => {
  const detail = e.error instanceof Error ? `: ${e.error.message.split("\n")[0]}` : "";
  process.stderr.write(`tidemark: embedded nats-server ${e.type}${e.pid ? ` (pid ${e.pid})` : ""}${detail}\n`);
};

/** Starts the embedded server under supervision. */
export async function startSupervisedNats(options: SupervisedNatsOptions = {}): Promise<SupervisedNats> {
  const { maxRestarts = 5, restartDelayMs = 250, onEvent = defaultEvent, ...serverOptions } = options;
  let current: EmbeddedNats = await startEmbeddedNats(serverOptions);
  // Restarts reuse the client port so the connection's URL stays valid.
  const pinned: EmbeddedNatsOptions = { ...serverOptions, dataDir: current.dataDir, port: current.port };
  let stopped = false;
  let restarts = 0;

  const watch = (server: EmbeddedNats): void => {
    void server.exited.then(async () => {
      let failures = 0;
      while (!stopped && current === server) {
        await new Promise((r) => setTimeout(r, Math.min(restartDelayMs * 2 ** failures, 8_000)));
        if (stopped) return;
        try {
          const next = await startEmbeddedNats(pinned);
          if (stopped) {
            await next.stop();
            return;
          }
          current = next;
          restarts++;
          onEvent({ type: "restarted", pid: next.pid });
          watch(next);
          return;
        } catch (error) {
          failures++;
          onEvent({ type: "restart-failed", error });
          if (failures >= maxRestarts) {
            onEvent({ type: "gave-up", error });
            return;
          }
        }
      }
    });
  };
  watch(current);

  return {
    url: current.url,
    get wsUrl() {
      return current.wsUrl;
    },
    maxFileStore: current.maxFileStore,
    dataDir: current.dataDir,
    binary: current.binary,
    version: current.version,
    durability: current.durability,
    credentials: current.credentials,
    get pid() {
      return current.pid;
    },
    get restarts() {
      return restarts;
    },
    stop: async (graceMs?: number) => {
      stopped = true;
      await current.stop(graceMs);
    },
  };
}
