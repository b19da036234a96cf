import type { BrowserContext } from "@playwright/test";
import { expectShown, openTabs, test, expect } from "../lib/demo.js";

/**
 * Overwrites the saved cursor of every feed in the profile's IndexedDB, with no tab of the demo
 * open (a same-origin page that does not start the client).
 */
async function corruptSavedCursors(context: BrowserContext, url: string, cursor: string): Promise<number> {
  const page = await context.newPage();
  await page.goto(`${url}/api/stats`);
  const changed = await page.evaluate(async (bad) => {
    const db = await new Promise<IDBDatabase>((resolve, reject) => {
      const open = indexedDB.open("tidemark");
      open.onsuccess = () => resolve(open.result);
      open.onerror = () => reject(open.error);
    });
    const tx = db.transaction("feeds", "readwrite");
    const store = tx.objectStore("feeds");
    const records = await new Promise<{ key: string; cursor?: string; items?: unknown[] }[]>((resolve) => {
      const all = store.getAll();
      all.onsuccess = () => resolve(all.result);
    });
    let n = 0;
    for (const record of records) {
      if (!Array.isArray(record.items)) continue;
      store.put({ ...record, cursor: bad });
      n++;
    }
    await new Promise((resolve) => (tx.oncomplete = resolve));
    db.close();
    return n;
  }, cursor);
  await page.close();
  return changed;
}

test("corrupted cursor - an empty or over-long saved cursor: one reset and a gap marker, history kept, live, and not sent again", async ({ context, server }) => {
  const resets = async () => (await server.metrics())('tidemark_bridge_resets_total{reason="invalid_cursor"}');
  const protocolErrors = async () => (await server.metrics())('tidemark_bridge_rejected_total{reason="protocol_error"}');
  let shown: string[] = [];
  for (const [round, bad] of ["", "x".repeat(1_500)].entries()) {
    let [tab] = await openTabs(context, server.url, 1);
    await server.publish("acme", `round ${round}`, 2);
    shown = await server.retainedIds("acme");
    await expectShown(tab!, shown);
    // History is written at most every 100 ms.
    await tab!.waitForTimeout(500);
    await tab!.close();

    expect(await corruptSavedCursors(context, server.url, bad)).toBe(1);
    [tab] = await openTabs(context, server.url, 1);
    await expect(tab!.getByTestId("gap-marker")).toHaveCount(round + 1);
    await expectShown(tab!, shown);
    expect(await resets()).toBe(round + 1);
    expect(await protocolErrors()).toBe(0);

    // The reset's head replaced the bad cursor: a reload resumes without another reset.
    await tab!.waitForTimeout(500);
    await tab!.reload();
    await expect(tab!.getByTestId("connection-status")).toHaveText("live");
    await expect(tab!.getByTestId("gap-marker")).toHaveCount(round + 1);
    expect(await resets()).toBe(round + 1);
    await server.publish("acme", `after round ${round}`);
    shown = await server.retainedIds("acme");
    await expectShown(tab!, shown);
    await tab!.close();
  }
});
