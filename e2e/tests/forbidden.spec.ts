import { expectConnections, expectShown, openTabs, test, expect, screenshot } from "../lib/demo.js";

test("forbidden - a tenant the user does not belong to is refused, the others keep working", async ({ context, server }) => {
  const [tab] = await openTabs(context, server.url, 1);
  await tab!.getByTestId("tenant-select").selectOption("initech");
  await expect(tab!.getByTestId("refused")).toBeVisible();
  await expect(tab!.getByTestId("refused")).toHaveAttribute("data-code", "FORBIDDEN");
  const refused = await server.publish("initech", "sneaky");
  expect(refused.status).toBe(403);
  await expect(tab!.getByTestId("notification")).toHaveCount(0);
  await screenshot(tab!, "forbidden-tenant");

  await tab!.getByTestId("tenant-select").selectOption("globex");
  await expect(tab!.getByTestId("refused")).toBeHidden();
  await server.publish("globex", "hello globex");
  await expectShown(tab!, await server.retainedIds("globex"));
  await expectConnections(server, 1);
});
