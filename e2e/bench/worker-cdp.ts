/**
 * A CDP session on the profile's SharedWorker. Playwright has no SharedWorker API, so this goes
 * through the browser-level session: Target.attachToTarget, then messages to the target.
 */
import type { Browser, CDPSession } from "@playwright/test";

export interface WorkerSession {
  call(method: string, params?: Record<string, unknown>): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

/** Attaches to the first shared worker of the browser; undefined when there is none. */
export async function sharedWorkerSession(b: Browser): Promise<WorkerSession | undefined> {
  const cdp: CDPSession = await b.newBrowserCDPSession();
  const { targetInfos } = (await cdp.send("Target.getTargets")) as { targetInfos: { targetId: string; type: string }[] };
  const worker = targetInfos.find((t) => t.type === "shared_worker");
  if (!worker) {
    await cdp.detach();
    return undefined;
  }
  const { sessionId } = (await cdp.send("Target.attachToTarget", { targetId: worker.targetId, flatten: false })) as { sessionId: string };
  let nextId = 0;
  const waiting = new Map<number, (result: Record<string, unknown>) => void>();
  cdp.on("Target.receivedMessageFromTarget", (e: { sessionId: string; message: string }) => {
    if (e.sessionId !== sessionId) return;
    const msg = JSON.parse(e.message) as { id?: number; result?: Record<string, unknown> };
    const resolve = msg.id === undefined ? undefined : waiting.get(msg.id);
    if (!resolve) return;
    waiting.delete(msg.id!);
    resolve(msg.result ?? {});
  });
  return {
    call: (method, params = {}) =>
      new Promise((resolve) => {
        const id = ++nextId;
        waiting.set(id, resolve);
        void cdp.send("Target.sendMessageToTarget", { sessionId, message: JSON.stringify({ id, method, params }) });
      }),
    close: async () => {
      await cdp.send("Target.detachFromTarget", { sessionId }).catch(() => undefined);
      await cdp.detach();
    },
  };
}
