import { MAX_PUBLISH_COUNT } from "../lib/demo-server.js";
import { expectShown, openTabs, test, expect } from "../lib/demo.js";

const note = { tenantId: "acme", text: "guarded" };

test("publish guard - refuses a missing or forged token (401), a non-JSON body (415), another origin (403), a count over the bound (400) and a tenant the user may not see (403)", async ({ server }) => {
  const status = async (p: Promise<Response>) => (await p).status;
  const token = await server.login();

  // No token, a garbage one, and a valid token with its signature altered.
  expect(await status(server.publishRequest(note, { token: null }))).toBe(401);
  expect(await status(server.publishRequest(note, { token: "demo-token:ada" }))).toBe(401);
  const forged = token.slice(0, -4) + (token.endsWith("AAAA") ? "BBBB" : "AAAA");
  expect(await status(server.publishRequest(note, { token: forged }))).toBe(401);

  // What a cross-site form can send: text/plain or a urlencoded form.
  expect(await status(server.publishRequest(note, { token, contentType: "text/plain" }))).toBe(415);
  expect(await status(server.publishRequest("tenantId=acme&text=x", { token, contentType: "application/x-www-form-urlencoded" }))).toBe(415);

  // Another origin, or none: the route belongs to the demo's own page.
  expect(await status(server.publishRequest(note, { token, origin: "http://evil.example" }))).toBe(403);
  expect(await status(server.publishRequest(note, { token, origin: `http://127.0.0.1:${server.port + 1}` }))).toBe(403);
  expect(await status(server.publishRequest(note, { token, origin: null }))).toBe(403);

  // A small batch bound.
  const over = await server.publishRequest({ ...note, count: MAX_PUBLISH_COUNT + 1 }, { token });
  expect(over.status).toBe(400);
  expect(await over.json()).toMatchObject({ code: "INVALID_ARGUMENT" });
  expect(await status(server.publishRequest({ ...note, count: 1_000 }, { token }))).toBe(400);

  // The bridge's authorize rule: ada belongs to acme and globex, not to initech.
  const foreign = await server.publishRequest({ tenantId: "initech", text: "sneaky" }, { token });
  expect(foreign.status).toBe(403);
  expect(await foreign.json()).toMatchObject({ code: "FORBIDDEN" });

  // Nothing refused was stored; the same request done right is accepted.
  expect(await server.retainedIds("acme")).toEqual([]);
  expect(await status(server.publishRequest({ ...note, count: MAX_PUBLISH_COUNT }, { token }))).toBe(200);
  expect(await server.retainedIds("acme")).toHaveLength(MAX_PUBLISH_COUNT);
});

test("publish guard - a cross-site form in the user's browser cannot publish into their feed, the page's own form can", async ({ context, server }) => {
  const [tab] = await openTabs(context, server.url, 1);
  // A page on another site that posts to the demo, the classic cross-site request forgery.
  const evil = await context.newPage();
  await evil.route("http://evil.test/**", (route) =>
    route.fulfill({
      contentType: "text/html",
      body: `<form method="post" enctype="text/plain" action="${server.url}/api/publish">
        <input name='{"tenantId":"acme","text":"forged","x":"' value='"}'></form>
        <script>document.forms[0].submit()</script>`,
    }),
  );
  const response = evil.waitForResponse(`${server.url}/api/publish`);
  await evil.goto("http://evil.test/");
  expect((await response).status()).toBe(403);
  expect(await server.retainedIds("acme")).toEqual([]);

  await tab!.getByTestId("publish-input").fill("from the page");
  await tab!.getByTestId("publish-button").click();
  await expect(tab!.getByTestId("notification")).toHaveText([/from the page/]);
  await expectShown(tab!, await server.retainedIds("acme"));
});
