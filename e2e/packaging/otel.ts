/**
 * OpenTelemetry beside the tarballs: a fresh app per SDK line installs `@tidemark/server` with
 * that SDK (npm picks the one `@opentelemetry/api` both accept), runs `otel/app.mjs` against the
 * embedded nats-server, and must see Tidemark's span and metrics in the app's SDK. With two
 * API copies (Tidemark pinned to another one) Tidemark's instruments stay no-ops and this fails.
 */
import { cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { cleanEnv, run } from "./proc.js";

export interface OtelLeg {
  /** "2.x", "3.x" */
  name: string;
  /** The SDK packages and exact versions the app lists (no `@opentelemetry/api`: npm chooses). */
  sdk: Record<string, string>;
  /** The package that holds the tracer provider. */
  traceSdk: string;
}

/** The SDK lines checked. 3.x declares Node >= 22.15; on Node 20 npm warns EBADENGINE and it runs. */
export const otelLegs: OtelLeg[] = [
  { name: "2.x", sdk: { "@opentelemetry/sdk-trace-base": "2.12.1", "@opentelemetry/sdk-metrics": "2.12.1" }, traceSdk: "@opentelemetry/sdk-trace-base" },
  { name: "3.x", sdk: { "@opentelemetry/sdk-trace": "3.1.1", "@opentelemetry/sdk-metrics": "3.1.1" }, traceSdk: "@opentelemetry/sdk-trace" },
];

interface Seen { node: string; spans: string[]; metrics: string[] }

/** Versions of every `@opentelemetry/api` copy under `node_modules`. */
function apiCopies(dir: string): string[] {
  const found: string[] = [];
  const walk = (modules: string) => {
    let entries: string[];
    try {
      entries = readdirSync(modules);
    } catch {
      return;
    }
    for (const entry of entries) {
      const names = entry.startsWith("@") ? readdirSync(join(modules, entry)).map((n) => `${entry}/${n}`) : [entry];
      for (const name of names) {
        if (name === "@opentelemetry/api") found.push((JSON.parse(readFileSync(join(modules, name, "package.json"), "utf8")) as { version: string }).version);
        walk(join(modules, name, "node_modules"));
      }
    }
  };
  walk(join(dir, "node_modules"));
  return found;
}

/** Installs and runs one leg in `dir`; throws unless Tidemark's span and metrics reached the app's SDK. */
export async function checkOtelLeg(leg: OtelLeg, dir: string, tarballs: Record<string, string>, env: Record<string, string>): Promise<string> {
  mkdirSync(dir, { recursive: true });
  cpSync(fileURLToPath(new URL("./otel/app.mjs", import.meta.url)), join(dir, "app.mjs"));
  const dependencies = { "@tidemark/shared": `file:${tarballs["@tidemark/shared"]}`, "@tidemark/server": `file:${tarballs["@tidemark/server"]}`, ...leg.sdk };
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: `tidemark-otel-${leg.name}`, private: true, type: "module", dependencies }, null, 2));
  const args = ["install", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"];
  await run("npm", args, dir).catch(() => run("npm", args, dir)); // one retry for a registry hiccup

  const copies = apiCopies(dir);
  if (copies.length !== 1) throw new Error(`OTel ${leg.name}: ${copies.length} copies of @opentelemetry/api (${copies.join(", ")}), not one`);
  const out = await run(process.execPath, ["app.mjs"], dir, cleanEnv({ ...env, OTEL_TRACE_SDK: leg.traceSdk, TIDEMARK_DATA_DIR: join(dir, "data") }));
  const line = out.split("\n").find((l) => l.startsWith("{"));
  if (!line) throw new Error(`OTel ${leg.name}: no result line:\n${out.slice(-4000)}`);
  const seen = JSON.parse(line) as Seen;
  if (!seen.spans.includes("process otel.events")) throw new Error(`OTel ${leg.name}: no "process otel.events" span from @tidemark/server: ${line}`);
  for (const metric of ["tidemark_publish_duration_seconds", "tidemark_worker_attempts"]) {
    if (!seen.metrics.includes(metric)) throw new Error(`OTel ${leg.name}: no ${metric} metric from @tidemark/server: ${line}`);
  }
  return `OTel ${leg.name} (api ${copies[0]}, Node ${seen.node}): span and metrics seen`;
}
