/**
 * The installed `tidemark` command through `npx`, as a user runs it: `--version`, a mistyped
 * option, a TypeScript config, and SIGTERM to npx alone and to its whole process group. npm
 * answers SIGTERM by killing the shell it started the command under and exiting (143) at once;
 * the command must drain anyway, stop its nats-server and free the port.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanEnv, runExit, Server, sleep, waitForOk } from "./proc.js";

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function gone(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (alive(pid)) {
    if (Date.now() > deadline) return false;
    await sleep(100);
  }
  return true;
}

const npx = (app: string, args: string[], env: Record<string, string>) => runExit("npx", ["--no-install", "tidemark", ...args], app, cleanEnv(env));

/** `--version`, a bad option, a `.ts` config. */
export async function checkCliInput(app: string, env: Record<string, string>): Promise<string> {
  const version = (JSON.parse(readFileSync(join(app, "node_modules/@tidemark/server/package.json"), "utf8")) as { version: string }).version;
  const shown = await npx(app, ["--version"], env);
  if (shown.code !== 0 || shown.stdout !== `${version}\n`) throw new Error(`tidemark --version: exit ${shown.code}, printed ${JSON.stringify(shown.stdout + shown.stderr)}, not ${version}`);

  const typo = await npx(app, ["serve", "--prot", "8080"], env);
  if (typo.code !== 2 || !typo.stderr.startsWith("tidemark: unknown option --prot") || typo.stderr.includes("{")) {
    throw new Error(`tidemark serve --prot: exit ${typo.code}, printed ${JSON.stringify(typo.stdout + typo.stderr)}; wanted one human line and exit 2`);
  }

  writeFileSync(join(app, "tidemark.config.ts"), 'const open = (): boolean => true;\nexport default { topics: [{ id: "ts.config", authorize: open }], authenticate: (token: string) => ({ id: token }) };\n');
  // Node 22.18+ and 23.6+ strip types by default (process.features.typescript); older ones cannot import .ts.
  const strips = Boolean((process.features as { typescript?: unknown }).typescript);
  if (!strips) {
    const ts = await npx(app, ["serve", "--port", "0", "--config", "tidemark.config.ts"], { ...env, TIDEMARK_DATA_DIR: join(app, "ts-data") });
    const said = ts.stdout + ts.stderr;
    if (ts.code !== 1 || !said.includes("tidemark.config.ts is TypeScript") || !said.includes("--import tsx")) {
      throw new Error(`a .ts config on Node ${process.version}: exit ${ts.code}, printed ${JSON.stringify(said)}; wanted the error that says what to do`);
    }
    return `tidemark --version ${version}; a mistyped option exits 2 with one line; a .ts config on Node ${process.version} says to use .mjs, Node 22.18+ or tsx`;
  }
  const server = Server.start("npx", ["--no-install", "tidemark", "serve", "--port", "0", "--config", "tidemark.config.ts", "--data", join(app, "ts-data")], app, cleanEnv(env));
  try {
    const line = await server.readyLine<{ url?: string }>(60_000);
    if (!line.url) throw new Error(`a .ts config on Node ${process.version} did not start: ${server.log.slice(-2000)}`);
  } finally {
    await server.stop();
  }
  return `tidemark --version ${version}; a mistyped option exits 2 with one line; a .ts config loads on Node ${process.version}`;
}

/** `npx tidemark serve`, then SIGTERM to npx alone or to its process group. */
export async function checkCliSigterm(app: string, dataDir: string, port: number, target: "process" | "group", env: Record<string, string>): Promise<string> {
  const cli = Server.start("npx", ["--no-install", "tidemark", "serve", "--port", String(port), "--data", dataDir], app, cleanEnv(env));
  try {
    await waitForOk(`http://127.0.0.1:${port}/healthz`, 60_000, cli);
    const natsPid = Number(readFileSync(join(dataDir, "nats", "nats-server.pid"), "utf8"));
    cli.signal("SIGTERM", target);
    const npxCode = await cli.exitCode();
    await cli.closed(30_000); // the tidemark process (npx's grandchild) holds the output until it exits
    const problems: string[] = [];
    if (!cli.log.includes('"msg":"stopped"')) problems.push("it never logged \"stopped\" (no drain)");
    if (cli.log.includes("restarted")) problems.push("the embedded nats-server was restarted during the drain");
    if (!(await gone(natsPid, 15_000))) problems.push(`nats-server ${natsPid} is still running`);
    const answers = await fetch(`http://127.0.0.1:${port}/healthz`).then(() => true, () => false);
    if (answers) problems.push(`port ${port} still answers`);
    if (problems.length > 0) throw new Error(`npx tidemark serve, SIGTERM to its ${target}: ${problems.join("; ")}\n${cli.log.slice(-4000)}`);
    return `SIGTERM to npx's ${target}: drained, port freed, nats-server stopped (npx exited ${npxCode})`;
  } finally {
    await cli.stop();
  }
}
