import { expectShown, openTabs, test, expect } from "../lib/demo.js";

test("recreated - the server lost its data: the saved cursor is refused, history stays, new events flow", async ({ context, server }) => {
  const [tab] = await openTabs(context, server.url, 1);
  await server.publish("acme", "old", 3);
  const old = await server.retainedIds("acme");
  await expectShown(tab!, old);

  // A new deployment with an empty store: the topic is re-created, sequences start again at 1.
  await server.stop();
  server.wipe();
  await server.launch();
  await expect(tab!.getByTestId("connection-status")).toHaveText("live", { timeout: 20_000 });
  await expect(tab!.getByTestId("gap-marker")).toHaveCount(1);
  await expectShown(tab!, old);
  const metrics = await server.metrics();
  const series = (reason: string) => metrics(`tidemark_bridge_resets_total{reason="${reason}"}`);
  expect(series("cursor_mismatch") + series("invalid_cursor")).toBe(1);

  await server.publish("acme", "new", 2);
  const fresh = await server.retainedIds("acme");
  expect(fresh).toHaveLength(2);
  await expectShown(tab!, [...old, ...fresh]);
  const order = await tab!.locator("#list > li").evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.testid));
  expect(order).toEqual(["notification", "notification", "notification", "gap-marker", "notification", "notification"]);
});
