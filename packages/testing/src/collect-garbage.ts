/**
 * A full garbage collection in another Node process, through its inspector: start the process
 * with `NODE_OPTIONS=--inspect=127.0.0.1:0`, pass what it printed. A memory figure taken right
 * after it measures what the process holds, not how far V8 let its heap grow since its last
 * collection (which moves the resident size by tens of MiB from one sample to the next).
 */
import { WebSocket } from "ws";

/** The inspector's WebSocket URL from a process's output ("Debugger listening on ws://…"). */
export function inspectorUrl(output: string[]): string | undefined {
  return /Debugger listening on (ws:\/\/\S+)/.exec(output.join(""))?.[1];
}

/** Runs a full collection (V8's low-memory one, which also returns freed pages) in the process at `url`. */
export async function collectGarbage(url: string, timeoutMs = 30_000): Promise<void> {
  await inspectorCall(url, "HeapProfiler.collectGarbage", timeoutMs);
}

/** Bytes of V8 heap in use in the process at `url` right after a full collection. */
export async function heapUsedAfterGc(url: string, timeoutMs = 30_000): Promise<number> {
  await inspectorCall(url, "HeapProfiler.collectGarbage", timeoutMs);
  const { usedSize } = (await inspectorCall(url, "Runtime.getHeapUsage", timeoutMs)) as { usedSize: number };
  return usedSize;
}

/** One inspector protocol call on a connection of its own; resolves with its result. */
async function inspectorCall(url: string, method: string, timeoutMs: number): Promise<unknown> {
  const ws = new WebSocket(url);
  try {
    return await new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${method}: no answer from ${url} in ${timeoutMs} ms`)), timeoutMs);
      ws.on("error", (err) => {
        clearTimeout(timer);
        reject(err);
      });
      ws.on("open", () => ws.send(JSON.stringify({ id: 1, method })));
      ws.on("message", (data) => {
        const reply = JSON.parse(String(data)) as { id?: number; result?: unknown; error?: { message: string } };
        if (reply.id !== 1) return;
        clearTimeout(timer);
        if (reply.error) reject(new Error(`${method}: ${reply.error.message}`));
        else resolve(reply.result);
      });
    });
  } finally {
    ws.close();
  }
}
