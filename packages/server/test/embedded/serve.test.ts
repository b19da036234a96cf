import { describe, it, expect } from "vitest";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { findNatsServer, natsServerVersion } from "../../src/index.js";

const bin = fileURLToPath(new URL("../../bin/tidemark.mjs", import.meta.url));

/** Runs `tidemark serve` on the embedded server until its "listening" line; returns that line. */
function listeningLine(args: string[], env: NodeJS.ProcessEnv): Promise<Record<string, unknown>> {
  const child = spawn(process.execPath, [bin, "serve", "--port", "0", ...args], { stdio: ["ignore", "pipe", "pipe"], env });
  let out = "";
  return new Promise<Record<string, unknown>>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "listening" line: ${out}`)), 30_000);
    child.stderr.on("data", (d) => (out += String(d)));
    child.stdout.on("data", (d) => {
      out += String(d);
      const line = out.split("\n").find((l) => l.includes('"listening"'));
      if (!line) return;
      clearTimeout(timer);
      resolve(JSON.parse(line) as Record<string, unknown>);
    });
    child.on("exit", (code) => reject(new Error(`exited with ${code}: ${out}`)));
  }).finally(() => {
    child.removeAllListeners("exit");
    child.kill("SIGTERM");
  });
}

describe("tidemark serve on the embedded server", () => {
  it("cli - the listening line names the nats-server version, binary and durability in force", async () => {
    const data = mkdtempSync(join(tmpdir(), "tidemark-serve-"));
    try {
      const binary = findNatsServer();
      const line = await listeningLine(["--data", data], { ...process.env, TIDEMARK_NATS_SERVER: binary });
      expect(line.natsServer).toEqual({
        version: natsServerVersion(binary),
        binary,
        durability: "fsync",
        credentials: join(data, "nats", "credentials.json"),
      });
      const old = await listeningLine(["--data", join(data, "old")], { ...process.env, TIDEMARK_NATS_SERVER: "/usr/sbin/nats-server" });
      expect(old.natsServer).toMatchObject({ version: natsServerVersion("/usr/sbin/nats-server"), durability: "buffered" });
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  });
});
