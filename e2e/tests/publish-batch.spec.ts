import { MAX_PUBLISH_COUNT } from "../lib/demo-server.js";
import { expectShown, openTabs, test, expect, shownIds } from "../lib/demo.js";

test("publish batch - one request of the route's bound publishes its events in flight and stores them in request order; the tab shows them in that order", async ({ context, server }) => {
  const [tab] = await openTabs(context, server.url, 1);
  const res = await server.publishRequest({ tenantId: "acme", text: "batch", count: MAX_PUBLISH_COUNT });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { published: number; last: { streamSequence: number } };
  expect(body.published).toBe(MAX_PUBLISH_COUNT);

  const retained = await server.retainedIds("acme");
  expect(retained).toHaveLength(MAX_PUBLISH_COUNT);
  // The receipt of the request's last event is the stream's newest.
  expect(retained.at(-1)).toMatch(new RegExp(`-${body.last.streamSequence}$`));
  await expectShown(tab!, retained);
  // Stream order is request order: "#1" first, "#100" last.
  const texts = await tab!.getByTestId("notification").locator("span").allTextContents();
  expect(texts).toEqual(Array.from({ length: MAX_PUBLISH_COUNT }, (_, i) => `batch #${i + 1}`));
  expect(await shownIds(tab!)).toEqual(retained);
});
