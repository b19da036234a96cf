/** The bridge logs through the application's pino-shaped logger (docs/bridge.md, `logger`). */
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { pino } from "pino";
import type { Logger } from "../../src/index.js";
import { TestClient } from "./client.js";
import { useBridgeFixture } from "./fixture.js";

const fx = useBridgeFixture();

/** A pino instance writing JSON lines to a stream the test reads. */
function pinoOnStream(level: string) {
  const stream = new PassThrough();
  const lines: Record<string, unknown>[] = [];
  let buffered = "";
  stream.on("data", (chunk: Buffer) => {
    buffered += chunk.toString();
    const parts = buffered.split("\n");
    buffered = parts.pop()!;
    for (const line of parts) lines.push(JSON.parse(line) as Record<string, unknown>);
  });
  return { logger: pino({ level }, stream), lines };
}

describe("bridge logger", () => {
  it("bridge - a pino logger gets the records, with their fields, at its own level", async () => {
    const sync = fx.sync();
    const topic = sync.topic({ id: "notes" });
    const { logger, lines } = pinoOnStream("info");
    const run = await fx.start({ topics: [{ topic, authorize: () => true }], origins: ["https://app.example"], logger, logLevel: undefined }, sync);
    await expect(TestClient.open(run.wsUrl, { origin: "https://evil.example" })).rejects.toMatchObject({ status: 403 });
    fx.tokens.set("t-log", { id: "u-log", tenants: [] });
    const client = await TestClient.connect(run.wsUrl, "t-log", { origin: "https://app.example" });
    await expect.poll(() => lines.find((l) => l.msg === "origin refused")).toBeTruthy();
    const refused = lines.find((l) => l.msg === "origin refused")!;
    expect(refused).toMatchObject({ level: 40, component: "tidemark-bridge", origin: "https://evil.example", host: `127.0.0.1:${run.server.port}` });
    // "connection authenticated" is debug: below the pino logger's own level.
    client.ws.terminate();
    expect(lines.some((l) => l.msg === "connection authenticated")).toBe(false);
    expect(run.logs).toEqual([]);
  });

  it("bridge - a pino-shaped object: child() gets the component, methods get (fields, msg)", async () => {
    const sync = fx.sync();
    const topic = sync.topic({ id: "notes" });
    const calls: { bindings: Record<string, unknown>; level: string; fields: Record<string, unknown>; msg: string }[] = [];
    const shaped = (bindings: Record<string, unknown>): Logger => {
      const method = (level: string) => (fields: Record<string, unknown>, msg: string) => void calls.push({ bindings, level, fields, msg });
      return { debug: method("debug"), info: method("info"), warn: method("warn"), error: method("error"), child: (b) => shaped({ ...bindings, ...b }) };
    };
    const run = await fx.start({ topics: [{ topic, authorize: () => true }], origins: ["https://app.example"], logger: shaped({}), logLevel: "warn" }, sync);
    fx.tokens.set("t-log2", { id: "u-log2", tenants: [] });
    (await TestClient.connect(run.wsUrl, "t-log2", { origin: "https://app.example" })).ws.terminate();
    await expect(TestClient.open(run.wsUrl, { origin: "https://evil.example" })).rejects.toMatchObject({ status: 403 });
    await expect.poll(() => calls.length).toBeGreaterThan(0);
    expect(calls).toEqual([
      { bindings: { component: "tidemark-bridge" }, level: "warn", fields: { origin: "https://evil.example", host: `127.0.0.1:${run.server.port}` }, msg: "origin refused" },
    ]);
  });
});
