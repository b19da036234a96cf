import { createElement as h, StrictMode } from "react";
import { renderToString } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { TidemarkProvider, useConnection, useFeed, useLiveFeed } from "./index.js";
import { FakeClient } from "../test/fake-client.js";

function Inbox() {
  const feed = useFeed({ topic: "notifications", tenantId: "acme" });
  const live = useLiveFeed({ topic: "notifications", tenantId: "acme" });
  const { status, tabs } = useConnection();
  return h("p", null, `${feed.status}:${feed.items.length}:${live.items.length}:${status}:${tabs}`);
}

describe("server rendering", () => {
  it("ssr - renders the empty server snapshot and asks nothing of the client", () => {
    const fake = new FakeClient();
    const html = renderToString(h(StrictMode, null, h(TidemarkProvider, { client: fake }, h(Inbox))));
    expect(html).toBe("<p>loading:0:0:connecting:0</p>");
    expect(fake.calls).toBe(0);
  });

  it("ssr - a provider given options makes no client and touches no window on the server", () => {
    expect(typeof (globalThis as { window?: unknown }).window).toBe("undefined");
    const html = renderToString(h(TidemarkProvider, { options: { url: "/ws" } }, h(Inbox)));
    expect(html).toBe("<p>loading:0:0:connecting:0</p>");
  });

  it("ssr - a hook outside the provider throws a clear error", () => {
    expect(() => renderToString(h(Inbox))).toThrow(/inside <TidemarkProvider>/);
  });
});
