/**
 * createSync() and the environment: options > TIDEMARK_NATS_URL > the embedded server, and one
 * log line per Sync naming the broker it uses (issue 25, item 1). Real nats-servers, a real
 * child process for the default logger.
 */
import { describe, it, expect } from "vitest";
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { connect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { createSync, type Sync } from "../../src/index.js";
import { eventStreamPrefix } from "../../src/internal.js";
import { startTestNats, uniqueNamespace, type TestNats } from "@tidemark/testing";

/** Names of the event streams of `namespace` on `server`, read with a raw connection. */
async function eventStreams(server: TestNats, namespace: string): Promise<string[]> {
  const nc = await connect({ servers: server.url });
  try {
    const jsm = await jetstreamManager(nc);
    const names: string[] = [];
    for await (const info of jsm.streams.list()) if (info.config.name.startsWith(eventStreamPrefix(namespace))) names.push(info.config.name);
    return names;
  } finally {
    await nc.close();
  }
}

/** Runs `fn` with `vars` set in process.env, restoring the previous values afterwards. */
async function withEnv<T>(vars: Record<string, string | undefined>, fn: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  const assign = (values: Record<string, string | undefined>) => {
    for (const [k, v] of Object.entries(values)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
  assign(vars);
  try {
    return await fn();
  } finally {
    assign(saved);
  }
}

interface Line {
  level: string;
  fields: Record<string, unknown>;
  msg: string;
}

/** A pino-shaped logger that keeps what it is given. */
function captureLogger(lines: Line[]) {
  const method = (level: string) => (fields: Record<string, unknown>, msg: string) => lines.push({ level, fields, msg });
  return { debug: method("debug"), info: method("info"), warn: method("warn"), error: method("error") };
}

/** A URL where nothing listens (a server was just there). */
async function deadUrl(): Promise<string> {
  const gone = await startTestNats();
  const url = gone.url;
  await gone[Symbol.asyncDispose]();
  return url;
}

describe("createSync and the environment", () => {
  it("broker - createSync() with TIDEMARK_NATS_URL in process.env connects to that server, no embedded server", async () => {
    await using nats = await startTestNats();
    const dataDir = mkdtempSync(join(tmpdir(), "tidemark-env-"));
    const lines: Line[] = [];
    let sync: Sync | undefined;
    try {
      await withEnv({ TIDEMARK_NATS_URL: nats.url, TIDEMARK_DATA_DIR: dataDir }, async () => {
        sync = createSync({ namespace: uniqueNamespace(), logger: captureLogger(lines) });
        const receipt = await sync.topic<number>({ id: "env.events" }).publish({ data: 1 });
        expect(receipt.streamSequence).toBe(1);
        // The topic's stream is on THAT server...
        expect(await eventStreams(nats, sync.namespace)).toHaveLength(1);
        // ...and no embedded server was started: it would have made <dataDir>/nats.
        expect((await sync.server()).embedded).toBeUndefined();
        expect(readdirSync(dataDir)).toEqual([]);
      });
    } finally {
      await sync?.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("broker - a comma-separated TIDEMARK_NATS_URL in process.env reaches the server that is up", async () => {
    await using nats = await startTestNats();
    const dead = await deadUrl();
    await withEnv({ TIDEMARK_NATS_URL: ` ${dead} , ${nats.url} ` }, async () => {
      // Several rounds: nats.js shuffles the list, so the dead server comes first in some.
      for (let round = 0; round < 3; round++) {
        const sync = createSync({ namespace: uniqueNamespace(), logger: false });
        try {
          expect((await sync.topic<number>({ id: "env.list" }).publish({ data: round })).streamSequence).toBe(1);
          expect(await eventStreams(nats, sync.namespace)).toHaveLength(1);
        } finally {
          await sync.close();
        }
      }
    });
  });

  it("broker - explicit options win over the environment: nats over TIDEMARK_NATS_URL, embedded over TIDEMARK_NATS_URL", async () => {
    await using chosen = await startTestNats();
    await using other = await startTestNats();
    const dataDir = mkdtempSync(join(tmpdir(), "tidemark-env-"));
    const lines: Line[] = [];
    try {
      await withEnv({ TIDEMARK_NATS_URL: other.url }, async () => {
        const external = createSync({ namespace: uniqueNamespace(), nats: { servers: chosen.url }, logger: false });
        try {
          await external.topic({ id: "env.precedence" }).publish({ data: 1 });
          expect(await eventStreams(chosen, external.namespace)).toHaveLength(1);
          expect(await eventStreams(other, external.namespace)).toHaveLength(0);
        } finally {
          await external.close();
        }
        const embedded = createSync({ namespace: uniqueNamespace(), embedded: { dataDir }, logger: captureLogger(lines) });
        try {
          await embedded.topic({ id: "env.precedence" }).publish({ data: 1 });
          expect((await embedded.server()).embedded?.dataDir).toBe(dataDir);
          expect(await eventStreams(other, embedded.namespace)).toHaveLength(0);
        } finally {
          await embedded.close();
        }
      });
      // The one line names the embedded server and its data directory, never its password.
      const info = lines.filter((l) => l.level === "info");
      expect(info).toHaveLength(1);
      expect(info[0]!.msg).toContain("embedded");
      expect(info[0]!.msg).toContain(dataDir);
      expect(info[0]!.fields).toMatchObject({ broker: "embedded", dataDir, from: "options" });
      const { pass } = JSON.parse(readFileSync(join(dataDir, "nats", "credentials.json"), "utf8")) as { pass: string };
      expect(JSON.stringify(info[0])).not.toContain(pass);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("broker - each Sync logs once which broker it uses, through its logger, with credentials redacted", async () => {
    await using nats = await startTestNats();
    const port = new URL(nats.url).port;
    const withSecret = `nats://alice:s3cret-pw@127.0.0.1:${port}`;
    const lines: Line[] = [];
    await withEnv({ TIDEMARK_NATS_URL: withSecret }, async () => {
      for (let n = 0; n < 2; n++) {
        const sync = createSync({ namespace: uniqueNamespace(), logger: captureLogger(lines) });
        try {
          // Several uses, two topics: still one line for this Sync.
          const a = sync.topic<number>({ id: "env.log.a" });
          await a.publish({ data: 1 });
          await a.publish({ data: 2 });
          await sync.topic({ id: "env.log.b" }).head();
          await sync.listTopics();
        } finally {
          await sync.close();
        }
      }
    });
    const info = lines.filter((l) => l.level === "info");
    expect(info).toHaveLength(2);
    for (const line of info) {
      expect(line.msg).toContain(`127.0.0.1:${port}`);
      expect(line.msg).toContain("TIDEMARK_NATS_URL");
      expect(line.fields).toMatchObject({ broker: "external", from: "TIDEMARK_NATS_URL", servers: [`nats://alice:***@127.0.0.1:${port}`] });
      expect(JSON.stringify(line)).not.toContain("s3cret-pw");
    }
  });

  it("broker - by default the line goes to stderr, once, from a process configured only by TIDEMARK_NATS_URL", async () => {
    await using nats = await startTestNats();
    const here = dirname(fileURLToPath(import.meta.url));
    const tsx = pathToFileURL(join(dirname(createRequire(import.meta.url).resolve("tsx/package.json")), "dist", "loader.mjs")).href;
    const namespace = uniqueNamespace();
    const env: NodeJS.ProcessEnv = { ...process.env, TIDEMARK_NATS_URL: nats.url, TIDEMARK_NAMESPACE: namespace };
    delete env.TIDEMARK_DATA_DIR;
    const child = spawn(process.execPath, ["--conditions=@tidemark/source", "--import", tsx, join(here, "fixtures", "env-sync.ts")], {
      stdio: ["ignore", "pipe", "pipe"],
      env,
      cwd: mkdtempSync(join(tmpdir(), "tidemark-env-cwd-")),
    });
    let out = "";
    let err = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => (out += c));
    child.stderr.setEncoding("utf8").on("data", (c: string) => (err += c));
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
    expect(code, err).toBe(0);
    expect(JSON.parse(out.trim())).toEqual({ sequence: 1, namespace, embedded: false });
    expect(await eventStreams(nats, namespace)).toHaveLength(2);
    const logLines = err.split("\n").filter((l) => l.includes("tidemark"));
    expect(logLines, err).toHaveLength(1);
    expect(logLines[0]).toContain(nats.url.replace("nats://", ""));
  });
});
