import { describe, it, expect } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { uniqueNamespace } from "@tidemark/testing";
import { alive, exited, firstLine, gone, spawnFixture } from "./fixtures/run.js";

/** Every line the child prints on stdout and stderr, collected until it exits. */
function output(child: ReturnType<typeof spawnFixture>): { text: () => string } {
  let text = "";
  child.stdout!.setEncoding("utf8").on("data", (c: string) => (text += c));
  child.stderr!.setEncoding("utf8").on("data", (c: string) => (text += c));
  return { text: () => text };
}

describe("embedded nats-server under a group signal", () => {
  // systemd's KillMode=control-group, `timeout` and `kill -TERM -PGID` signal every process of
  // the group: the application drains, and its broker must still be there while it does.
  it("embedded - SIGTERM to the parent's process group: the drain publishes on the same nats-server, which the parent then stops", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "tidemark-group-"));
    const child = spawnFixture("drainer.ts", [dataDir, uniqueNamespace()], { detached: true });
    try {
      const out = output(child);
      const { natsPid } = await firstLine<{ natsPid: number }>(child);
      const code = new Promise<number | null>((r) => child.once("exit", (c) => r(c)));
      process.kill(-child.pid!, "SIGTERM");
      await exited(child);
      const lines = out.text().split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as { drained?: number; natsPid?: number });
      expect(lines, out.text()).toContainEqual({ drained: 2, natsPid });
      expect(out.text()).not.toContain("restarted");
      expect(await code).toBe(0);
      expect(await gone(natsPid), `nats-server ${natsPid} outlived its parent`).toBe(true);
    } finally {
      if (alive(child.pid!)) child.kill("SIGKILL");
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
