/**
 * One process() worker in a process of its own, for the multi-process suites. Configured by
 * the TIDEMARK_TEST_WORKER environment variable (JSON); prints one JSON line per step.
 */
import { createSync, type ProcessOptions, type TopicOptions } from "../../src/index.js";

export interface ChildConfig {
  url: string;
  namespace: string;
  topic: TopicOptions;
  options: ProcessOptions;
  /** Handler time per event, ms. */
  handlerMs?: number;
  /** Event data values on which the handler blocks the event loop (a synchronous busy wait), ms. */
  blockOn?: { data: unknown; ms: number };
  /** Event data values on which the handler never returns. */
  hangOn?: unknown[];
  /** After this many handler starts, every further handler hangs (a worker stuck mid-work). */
  hangAfter?: number;
  /** Event data (numbers) with `data % mod === rem` always fail. */
  failWhen?: { mod: number; rem: number };
  /** Close the Sync right after start without stopping the worker, and let the process end. */
  closeWithoutStop?: boolean;
  /** After this many handler starts, stop the worker, close the Sync, and let the process end. */
  stopAfter?: number;
  /** Start the worker only when the test writes "go" on stdin. */
  waitForGo?: boolean;
  /** Probability that a handler throws. */
  failRate?: number;
}

const cfg = JSON.parse(process.env.TIDEMARK_TEST_WORKER ?? "{}") as ChildConfig;
const out = (line: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(line)}\n`);
const sync = createSync({ namespace: cfg.namespace, nats: { servers: cfg.url } });
const topic = sync.topic(cfg.topic);
if (cfg.waitForGo) {
  out({ type: "waiting" });
  await new Promise<void>((resolve) => {
    process.stdin.on("data", (chunk: Buffer) => chunk.toString().includes("go") && resolve());
  });
}
let starts = 0;
const worker = await topic.process(cfg.options, async (e) => {
  out({ type: "start", seq: e.streamSequence, attempt: e.attempt, data: e.data });
  starts++;
  if (starts === cfg.stopAfter) {
    // With stopGraceMs, a hung handler makes stop() reject; the process must still be able to end.
    void worker
      .stop()
      .catch((err: { code?: string }) => out({ type: "stop-timeout", code: err.code }))
      .then(() => sync.close({ timeoutMs: 0 }).catch(() => undefined))
      .then(() => out({ type: "closed" }));
  }
  if (cfg.hangOn?.includes(e.data) || (cfg.hangAfter !== undefined && starts > cfg.hangAfter)) {
    await new Promise(() => undefined);
  }
  if (cfg.blockOn && cfg.blockOn.data === e.data) {
    const until = Date.now() + cfg.blockOn.ms;
    while (Date.now() < until) {
      // A stalled event loop: no timer of the worker runs meanwhile.
    }
  }
  if (cfg.handlerMs) await new Promise((r) => setTimeout(r, cfg.handlerMs));
  const poisoned = cfg.failWhen !== undefined && (e.data as number) % cfg.failWhen.mod === cfg.failWhen.rem;
  if (poisoned || (cfg.failRate && Math.random() < cfg.failRate)) {
    out({ type: "fail", seq: e.streamSequence, attempt: e.attempt });
    throw new Error(`random failure of ${e.streamSequence}`);
  }
  out({ type: "done", seq: e.streamSequence, attempt: e.attempt, data: e.data });
});
out({ type: "ready", pid: process.pid });
if (cfg.stopAfter !== undefined) {
  // Nothing holds the process but the worker.
} else if (cfg.closeWithoutStop) {
  await sync.close();
  out({ type: "closed" });
} else {
  // The test process holds our stdin: when it goes away, so do we.
  process.stdin.resume().on("end", () => process.exit(1));
}
process.on("SIGTERM", () => {
  void worker
    .stop()
    .then(() => sync.close())
    .then(() => process.exit(0));
});
