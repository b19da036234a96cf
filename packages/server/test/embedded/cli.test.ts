import { describe, it, expect } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { TEST_UWS_BUILD, testUwsIsNative } from "@tidemark/testing";
import { alive, gone } from "./fixtures/run.js";
import { TestClient } from "../bridge/client.js";

const bin = fileURLToPath(new URL("../../bin/tidemark.mjs", import.meta.url));
const version = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;

interface Run { code: number | null; stdout: string; stderr: string }

/** Runs the `tidemark` command to its end. */
function runCli(args: string[]): Promise<Run> {
  const child = spawn(process.execPath, [bin, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => (stdout += String(d)));
  child.stderr.on("data", (d) => (stderr += String(d)));
  return new Promise((resolve) => child.once("close", (code) => resolve({ code, stdout, stderr })));
}

/** `cmd args` in a process group of its own until its "listening" line; the port and nats-server pid it reports. */
async function serve(
  cmd: string,
  args: string[],
  dataDir: string,
  extraEnv: Record<string, string> = {},
): Promise<{ child: ChildProcess; port: number; natsPid: number; output: () => string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extraEnv };
  delete env.TIDEMARK_NATS_URL; // the embedded server
  const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"], detached: true, env });
  let out = "";
  child.stderr!.on("data", (d) => (out += String(d)));
  const listening = await new Promise<{ url: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "listening" line: ${out}`)), 60_000);
    child.stdout!.on("data", (d) => {
      out += String(d);
      const line = out.split("\n").find((l) => l.includes('"listening"'));
      if (line) {
        clearTimeout(timer);
        resolve(JSON.parse(line) as { url: string });
      }
    });
    child.once("exit", (code) => reject(new Error(`exited with ${code}: ${out}`)));
  });
  child.removeAllListeners("exit");
  const natsPid = Number(readFileSync(join(dataDir, "nats", "nats-server.pid"), "utf8"));
  return { child, port: Number(new URL(listening.url).port), natsPid, output: () => out };
}

const exitOf = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.once("exit", (code) => resolve(code))));
const answers = (port: number) => fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false);

describe("the tidemark command", () => {
  it("cli - --version prints the package's version and exits 0", async () => {
    const run = await runCli(["--version"]);
    expect(run).toMatchObject({ code: 0, stdout: `${version}\n` });
  });

  it("cli - an unknown option is one human line on stderr (not JSON) and exit code 2", async () => {
    const run = await runCli(["serve", "--prot", "8080"]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/^tidemark: unknown option --prot\b/);
    expect(run.stderr).not.toContain("{");
    const port = await runCli(["serve", "--port", "http"]);
    expect(port.code).toBe(2);
    expect(port.stderr).toMatch(/^tidemark: --port must be an integer 0\.\.65535, got "http"/);
    const command = await runCli(["srve"]);
    expect(command.code).toBe(2);
    expect(command.stderr).toMatch(/^tidemark: unknown command "srve"/);
  });

  const cases = [
    { name: "SIGTERM to its process", group: false },
    // systemd's KillMode=control-group, `timeout`, `kill -TERM -PGID`: every process of the group at once.
    { name: "SIGTERM to its process group", group: true },
  ];
  for (const { name, group } of cases) {
    it(`cli - tidemark serve under ${name} drains and exits 0: the port freed, the embedded nats-server stopped, not restarted`, async () => {
      const dataDir = mkdtempSync(join(tmpdir(), "tidemark-cli-"));
      const { child, port, natsPid, output } = await serve(process.execPath, [bin, "serve", "--port", "0", "--data", dataDir], dataDir);
      try {
        expect(await answers(port)).toBe(true);
        // The Sync's "which broker" line, once, as a JSON log line like the CLI's own.
        const brokerLines = output().split("\n").filter((l) => l.includes('"tidemark-sync"'));
        expect(brokerLines, output()).toHaveLength(1);
        expect(JSON.parse(brokerLines[0]!)).toMatchObject({ broker: "embedded", from: "options" });
        const code = exitOf(child);
        if (group) process.kill(-child.pid!, "SIGTERM");
        else child.kill("SIGTERM");
        expect(await code, output()).toBe(0);
        expect(output()).toContain('"stopped"');
        expect(output()).not.toContain("restarted");
        expect(await gone(natsPid), `nats-server ${natsPid} outlived tidemark serve`).toBe(true);
        expect(await answers(port)).toBe(false);
      } finally {
        if (alive(child.pid!)) process.kill(-child.pid!, "SIGKILL");
        rmSync(dataDir, { recursive: true, force: true });
      }
    });
  }

  it("cli - SIGTERM while tidemark serve is still starting exits 0 and leaves no nats-server", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "tidemark-cli-"));
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env.TIDEMARK_NATS_URL;
    const child = spawn(process.execPath, [bin, "serve", "--port", "0", "--data", dataDir], { stdio: ["ignore", "pipe", "pipe"], detached: true, env });
    let out = "";
    child.stdout.on("data", (d) => (out += String(d)));
    child.stderr.on("data", (d) => (out += String(d)));
    const code = exitOf(child);
    try {
      // The broker is up, so the command is inside its start (or just past it): a signal now must
      // not kill it with the default action.
      const pidFile = join(dataDir, "nats", "nats-server.pid");
      let natsPid = 0;
      for (let i = 0; i < 600 && !natsPid; i++) {
        try {
          natsPid = Number(readFileSync(pidFile, "utf8"));
        } catch {
          await new Promise((r) => setTimeout(r, 50));
        }
      }
      expect(natsPid, out).toBeGreaterThan(0);
      child.kill("SIGTERM");
      expect(await code, out).toBe(0);
      expect(await gone(natsPid), `nats-server ${natsPid} outlived tidemark serve`).toBe(true);
    } finally {
      if (alive(child.pid!)) process.kill(-child.pid!, "SIGKILL");
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("cli - config.hubs reaches the Sync's hubs: a bad hub setting stops tidemark serve with its InvalidArgumentError", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "tidemark-cli-"));
    try {
      const config = (hubs: string) => {
        const file = join(dataDir, `config-${hubs.length}.mjs`);
        writeFileSync(file, `export default { topics: [{ id: "inbox", authorize: () => true }], authenticate: (t) => ({ id: t }), hubs: ${hubs} };`);
        return file;
      };
      const bad = await runCli(["serve", "--port", "0", "--data", dataDir, "--config", config("{ maxCatchUps: 0 }")]);
      expect(bad.code, bad.stdout + bad.stderr).not.toBe(0);
      expect(bad.stdout + bad.stderr).toContain("hub option maxCatchUps must be positive");
      const notObject = await runCli(["serve", "--port", "0", "--data", dataDir, "--config", config('"big"')]);
      expect(notObject.code).not.toBe(0);
      expect(notObject.stdout + notObject.stderr).toContain("config.hubs must be an object");
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("cli - --uws serves WebSockets with a native uWebSockets.js build and drains on SIGTERM; a module that does not load or is not native exits 2 with one line", async () => {
    const missing = await runCli(["serve", "--port", "0", "--uws", "no-such-uws-build"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^tidemark: --uws: cannot load "no-such-uws-build"/);
    const notUws = await runCli(["serve", "--port", "0", "--uws", "ws"]);
    expect(notUws.code).toBe(2);
    expect(notUws.stderr).toContain('"ws" is not a native uWebSockets.js build');
    expect((await runCli(["serve", "--uws", "ws", "--backlog", "10"])).stderr).toContain("--backlog cannot be set with --uws");

    const build = TEST_UWS_BUILD;
    if (!testUwsIsNative()) {
      // This Node has no build in that package (it falls back to JavaScript): refused, as above.
      const fallback = await runCli(["serve", "--port", "0", "--uws", build]);
      expect(fallback.code).toBe(2);
      expect(fallback.stderr).toContain("is not a native uWebSockets.js build");
      return;
    }
    const dataDir = mkdtempSync(join(tmpdir(), "tidemark-cli-"));
    const { child, port, natsPid, output } = await serve(process.execPath, [bin, "serve", "--port", "0", "--data", dataDir, "--uws", build], dataDir);
    try {
      expect(output()).toContain('"websockets":"uWebSockets.js"');
      expect(await answers(port)).toBe(true);
      const client = await TestClient.connect(`ws://127.0.0.1:${port}/ws`, "anyone");
      const { hub } = await client.subscribe({ id: "s", topic: "demo.notifications", tenantId: "t" });
      await client.next((f) => f.type === "caught_up");
      const published = await fetch(`http://127.0.0.1:${port}/dev/publish?tenantId=t`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ text: "over uWS" }),
      });
      expect(published.status, await published.clone().text()).toBeLessThan(300);
      expect((await client.events(String(hub), 1))[0]!.event).toMatchObject({ data: { text: "over uWS" } });
      const code = exitOf(child);
      child.kill("SIGTERM");
      expect((await client.next((f) => f.type === "drain")).type).toBe("drain");
      expect(await code, output()).toBe(0);
      expect(await gone(natsPid)).toBe(true);
      expect(await answers(port)).toBe(false);
    } finally {
      if (alive(child.pid!)) process.kill(-child.pid!, "SIGKILL");
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  // `npx tidemark serve` and `npm start` run the command under a shell that npm kills on SIGTERM,
  // and npm exits at once: the command is left behind with the port and the broker.
  it("cli - started by npm, tidemark serve drains when the shell that started it dies", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "tidemark-cli-"));
    const shell = `"${process.execPath}" "${bin}" serve --port 0 --data "${dataDir}"; exit $?`;
    const { child, port, natsPid, output } = await serve("/bin/sh", ["-c", shell], dataDir, { npm_command: "exec" });
    try {
      child.kill("SIGTERM"); // the shell only, as npm does
      expect(await gone(natsPid), `nats-server ${natsPid} outlived the shell: ${output()}`).toBe(true);
      expect(await answers(port)).toBe(false);
    } finally {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // the group is gone
      }
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
