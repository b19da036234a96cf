import { describe, expect, it } from "vitest";
import { FeedLog } from "../feed-log.js";
import { Saver } from "./saver.js";
import type { SavedFeed } from "../feed-log.js";
import type { FeedStore } from "./store.js";

function countingStore() {
  const records = new Map<string, SavedFeed>();
  let writes = 0;
  const store: Pick<FeedStore, "load" | "save"> = {
    load: async (key) => records.get(key),
    save: async (feed) => {
      writes++;
      records.set(feed.key, structuredClone(feed));
    },
  };
  return { store, records, writes: () => writes };
}

const log = (key: string) => new FeedLog({ key, lastN: 0, items: [] }, 10);

describe("saver", () => {
  it("saver - a burst of changes is one write per feed", async () => {
    const { store, writes, records } = countingStore();
    const saver = new Saver(store, 50);
    const a = log("a");
    for (let i = 0; i < 20; i++) {
      a.addWatermark(`not a cursor ${i}`);
      saver.mark(a);
    }
    saver.mark(log("b"));
    await new Promise((r) => setTimeout(r, 120));
    expect(writes()).toBe(2);
    expect([...records.keys()].sort()).toEqual(["a", "b"]);
  });

  it("saver - flush writes now and waits for it", async () => {
    const { store, records } = countingStore();
    const saver = new Saver(store, 60_000);
    saver.mark(log("now"));
    await saver.flush();
    expect(records.has("now")).toBe(true);
  });
});
