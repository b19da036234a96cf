import { describe, it, expect } from "vitest";
import { InvalidArgumentError, type Watch } from "../../src/index.js";
import { failure, useCoreFixture } from "./fixture.js";

const fx = useCoreFixture();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The next tick, or "none" when none comes within `ms`. */
async function nextTick(it: AsyncIterator<void>, ms: number): Promise<"tick" | "done" | "none"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<"none">((r) => (timer = setTimeout(() => r("none"), ms)));
  const r = await Promise.race([it.next().then((x): "tick" | "done" => (x.done ? "done" : "tick")), timeout]);
  clearTimeout(timer);
  return r;
}

/** Counts the ticks readable now (each read waits at most `ms`). Leaves one read pending. */
async function drain(it: AsyncIterator<void>, ms: number): Promise<number> {
  let n = 0;
  for (;;) {
    // A read that timed out stays pending on the iterator: the next tick resolves it.
    const r = await nextTick(it, ms);
    if (r !== "tick") return n;
    n++;
  }
}

describe("watch", () => {
  it("watch - 100 events published while nobody reads coalesce into one or two ticks; a later publish ticks again", async () => {
    const t = fx.sync().topic<number>({ id: "watch.coalesce" });
    const ac = new AbortController();
    const w: Watch = await t.watch({ signal: ac.signal });
    const it = w[Symbol.asyncIterator]();
    for (let i = 0; i < 100; i++) await t.publish({ data: i });
    await sleep(300); // let the republished messages all arrive
    const ticks = await drain(it, 300);
    expect(ticks).toBeGreaterThanOrEqual(1);
    expect(ticks).toBeLessThanOrEqual(2);
    // The pending read from drain() is woken by the next change.
    const later = it.next();
    await t.publish({ data: 100 });
    expect(await Promise.race([later.then(() => "tick"), sleep(5000).then(() => "none")])).toBe("tick");
    ac.abort();
    expect(await it.next()).toEqual({ done: true, value: undefined });
  });

  it("watch - a publish right after watch() resolves is never missed, from another connection too", async () => {
    const s = fx.sync();
    const other = fx.sync({ namespace: s.namespace });
    const t = s.topic<number>({ id: "watch.seam" });
    const publisher = other.topic<number>({ id: "watch.seam" });
    await publisher.head();
    for (let i = 0; i < 20; i++) {
      const w = await t.watch({ tenantId: `t${i}` });
      await publisher.publish({ data: i, tenantId: `t${i}` });
      const it = w[Symbol.asyncIterator]();
      expect(await nextTick(it, 5000)).toBe("tick");
      w.close();
      expect(await it.next()).toEqual({ done: true, value: undefined });
    }
  });

  it("watch - a tenant's watch ignores other tenants and the untenanted events", async () => {
    const t = fx.sync().topic<number>({ id: "watch.tenant" });
    const w = await t.watch({ tenantId: "a" });
    const it = w[Symbol.asyncIterator]();
    await t.publish({ data: 1, tenantId: "b" });
    await t.publish({ data: 2 });
    expect(await nextTick(it, 300)).toBe("none");
    // The read above is still pending; a's event wakes it.
    const next = it.next();
    await t.publish({ data: 3, tenantId: "a" });
    expect(await Promise.race([next.then(() => "tick"), sleep(5000).then(() => "none")])).toBe("tick");
    w.close();
  });

  it("watch - a bad tenant rejects; an aborted signal gives an ended watch", async () => {
    const t = fx.sync().topic<number>({ id: "watch.bad" });
    expect(await failure(t.watch({ tenantId: "" }))).toBeInstanceOf(InvalidArgumentError);
    const ac = new AbortController();
    ac.abort();
    const w = await t.watch({ signal: ac.signal });
    expect(await w[Symbol.asyncIterator]().next()).toEqual({ done: true, value: undefined });
  });
});
