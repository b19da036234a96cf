/**
 * Every reader releases its JetStream consumer on an abort, whenever it comes: before the
 * consumer exists, while it is created, or while the reader waits on a quiet tenant.
 */
import { describe, it, expect } from "vitest";
import { collect, useCoreFixture } from "./fixture.js";

const fx = useCoreFixture();

async function consumersOn(stream: string): Promise<number> {
  return (await collect(fx.jsm.consumers.list(stream))).length;
}

describe("reader consumers", () => {
  it("consumers - readers aborted at any point leave no consumer, and the Sync's count returns to 0", async () => {
    const sync = fx.sync();
    const t = sync.topic<number>({ id: "abort.points" });
    await t.publish({ data: 1, tenantId: "busy" });
    const stream = `TMEV_${sync.namespace}_abort~points`;
    const ends: Promise<unknown>[] = [];
    for (let i = 0; i < 200; i++) {
      const ac = new AbortController();
      const kind = i % 3;
      const read =
        kind === 0
          ? t.follow({ tenantId: "quiet", signal: ac.signal })
          : kind === 1
            ? t.follow({ signal: ac.signal, after: t.cursorAt(1) })
            : t.replay({ tenantId: "quiet", after: t.cursorAt(0), signal: ac.signal });
      const it = read[Symbol.asyncIterator]();
      ends.push(it.next());
      const delay = i % 10 === 0 ? -1 : Math.floor(Math.random() * 60);
      if (delay < 0) ac.abort(); // aborted right after the call
      else setTimeout(() => ac.abort(), delay);
      if (i % 20 === 19) await new Promise((r) => setTimeout(r, 30));
    }
    // Every read ends (none waits for an event of the quiet tenant).
    let timer: NodeJS.Timeout | undefined;
    const ended = await Promise.race([
      Promise.allSettled(ends).then(() => true),
      new Promise<boolean>((r) => (timer = setTimeout(() => r(false), 20_000))),
    ]);
    clearTimeout(timer);
    const left = await consumersOn(stream);
    expect({ ended, left, held: sync.stats().consumers }).toEqual({ ended: true, left: 0, held: 0 });
  });

  it("consumers - stats() counts the consumers readers hold open", async () => {
    const sync = fx.sync();
    const t = sync.topic<number>({ id: "abort.count" });
    await t.publish({ data: 1 });
    expect(sync.stats().consumers).toBe(0);
    const ac = new AbortController();
    const its = [0, 1, 2].map(() => t.follow({ signal: ac.signal, tenantId: "quiet" })[Symbol.asyncIterator]());
    const pending = its.map((it) => it.next());
    const deadline = Date.now() + 10_000;
    while (sync.stats().consumers < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(sync.stats().consumers).toBe(3);
    expect(await consumersOn(`TMEV_${sync.namespace}_abort~count`)).toBe(3);
    ac.abort();
    await Promise.all(pending);
    expect(sync.stats().consumers).toBe(0);
  });
});
