import { DemoServer } from "../lib/demo-server.js";
import { expectShown, openTabs, test, expect } from "../lib/demo.js";

test("token - short-lived tokens are refreshed in place, once per profile, with no reconnect", async ({ context }) => {
  // Tokens live 4 s; the bridge enforces it, the client refreshes at 80 % of their life.
  const server = await DemoServer.start({ env: { DEMO_TOKEN_TTL_MS: "4000" } });
  try {
    const tabs = await openTabs(context, server.url, 3);
    const connectionId = () => tabs[0]!.evaluate(() => (window as unknown as { tidemark: { client: { state: { connectionId?: string } } } }).tidemark.client.state.connectionId);
    const before = await connectionId();
    expect(before).toBeTruthy();
    await tabs[0]!.waitForTimeout(9_000);
    // Two or three refreshes for the profile (one per tab would be three times as many)...
    const tokens = await server.tokens();
    expect(tokens).toBeGreaterThanOrEqual(3);
    expect(tokens).toBeLessThanOrEqual(5);
    // ... on the same socket, which the server would have closed at the first expiry.
    expect(await connectionId()).toBe(before);
    expect(await server.connections()).toBe(1);
    await server.publish("acme", "still authorized", 2);
    const ids = await server.retainedIds("acme");
    for (const tab of tabs) await expectShown(tab, ids);
  } finally {
    await server.dispose();
  }
});
