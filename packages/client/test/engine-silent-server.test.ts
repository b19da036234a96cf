/**
 * A server that goes silent without closing (frozen by SIGSTOP here; a stuck event loop or a dead
 * machine behind a balancer that keeps the TCP connection alike) is noticed by the engine within
 * 20 s with the default settings (the bridge pings every 10 s; the engine gives up after 1.6
 * intervals of silence), and one that thaws delivers nothing twice: the engine resumes from its
 * cursor on a new socket. A real `tidemark serve` process on a real nats-server, serving its
 * WebSockets with `ws` (the default) and, where this Node has a native build, uWebSockets.js
 * (`--uws`): the heartbeat that makes the 20 s is the same, and its idle cost is the one
 * docs/benchmarks/heartbeat.md measures on each.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createSync, type Sync } from "@tidemark/server";
import { freeze, startBridgeProcess, startTestNats, TEST_UWS_BUILD, testUwsIsNative, thaw, uniqueNamespace, writeBridgeConfig, type BridgeProcess, type TestNats } from "@tidemark/testing";
import { Engine } from "../src/engine.js";
import { attachTab, until } from "./engine-fixture.js";

let nats: TestNats;
let sync: Sync;
let bridge: BridgeProcess | undefined;
const namespace = uniqueNamespace("silent");
const dir = mkdtempSync(join(tmpdir(), "tidemark-silent-"));

const servers = [{ name: "ws", args: [] as string[] }, ...(testUwsIsNative() ? [{ name: "uWebSockets.js", args: ["--uws", TEST_UWS_BUILD] }] : [])];

beforeAll(async () => {
  nats = await startTestNats();
  sync = createSync({ namespace, nats: { servers: nats.url } });
});

afterEach(async () => {
  if (bridge) {
    thaw(bridge.pid);
    await bridge.kill();
    bridge = undefined;
  }
});

afterAll(async () => {
  await sync?.close();
  await nats?.[Symbol.asyncDispose]();
  rmSync(dir, { recursive: true, force: true });
});

describe.each(servers)("engine - a silent server ($name)", ({ name, args }) => {
  it(`engine - a frozen bridge (${name}) is noticed within 20 s with the default heartbeat; thawed, it delivers nothing twice`, async () => {
    const topic = sync.topic<{ n: number }>({ id: "engine.silent" });
    await topic.head();
    // The bridge's defaults: no heartbeatMs in the config.
    const config = writeBridgeConfig(
      dir,
      `export default { namespace: ${JSON.stringify(namespace)}, topics: [{ id: "engine.silent", authorize: (p, r) => r.tenantId === "acme" }], authenticate: (t) => (t === "token-ada" ? { id: "ada" } : null), logLevel: "warn" };`,
    );
    bridge = await startBridgeProcess(["--nats", nats.url, "--config", config, ...args]);
    const port = Number(new URL(bridge.url).port);
    const engine = new Engine();
    try {
      const tab = await attachTab(engine, "t", port);
      await engine.open("t", { id: "f", mode: "hub", topic: "engine.silent", tenantId: "acme", effects: false });
      const live = () => tab.status()?.type === "status" && (tab.status() as { status: string }).status === "live";
      await until(live, 20_000);
      for (let n = 1; n <= 3; n++) await topic.publish({ tenantId: "acme", data: { n } });
      await until(() => tab.sequences("f").length === 3);

      await freeze(bridge.pid);
      const frozenAt = Date.now();
      // Published while the bridge is frozen: they reach the tab after it resumes, once.
      for (let n = 4; n <= 5; n++) await topic.publish({ tenantId: "acme", data: { n } });
      await until(() => !live(), 30_000);
      const noticedMs = Date.now() - frozenAt;
      console.log(`FIGURES silent-server ${JSON.stringify({ server: name, noticedMs })}`);
      expect(noticedMs).toBeLessThanOrEqual(20_000);

      thaw(bridge.pid);
      await until(live, 30_000);
      await until(() => tab.sequences("f").length >= 5, 10_000);
      const seen = tab.sequences("f");
      expect(seen).toHaveLength(5);
      expect(new Set(seen).size).toBe(5);
      expect([...seen].sort((a, b) => Number(a) - Number(b))).toEqual(seen);
    } finally {
      await engine.shutdown();
    }
  }, 90_000);
});
