/** Dev mode only: `POST /dev/publish?tenantId=...` with a JSON body publishes to the demo topic. */
import { Hono } from "hono";
import type { Topic } from "../core/types.js";

export function devPublishRoute(bridgeApp: Hono, topic: Topic<unknown>): Hono {
  const app = new Hono();
  app.post("/dev/publish", async (c) => {
    const tenantId = c.req.query("tenantId") || undefined;
    let data: unknown;
    try {
      data = await c.req.json();
    } catch {
      return c.json({ error: "the body must be JSON" }, 400);
    }
    const receipt = await topic.publish({ data, tenantId });
    return c.json(receipt);
  });
  app.route("/", bridgeApp);
  return app;
}
