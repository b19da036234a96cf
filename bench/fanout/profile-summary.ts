/**
 * Summarises V8 .cpuprofile files (from FANOUT_PROF=dir): the top frames by self time with
 * their share of the busy CPU (idle excluded), and the share by area (ws, nats, bridge, hub,
 * core, node internals, GC). For docs/benchmarks/profiles/fanout.md.
 *
 *   npx tsx bench/fanout/profile-summary.ts dir/CPU.*.cpuprofile [--top 15]
 */
import { readFileSync } from "node:fs";
import type { CpuProfile as Profile, ProfileNode as Node } from "../lib/cpuprofile.js";


const AREAS: [string, RegExp][] = [
  ["bridge", /packages\/server\/(dist|src)\/bridge\//],
  ["hub", /packages\/server\/(dist|src)\/hub\//],
  ["core", /packages\/server\/(dist|src)\/(core|transport)\//],
  ["shared", /packages\/shared\//],
  ["ws", /node_modules\/.*\/ws\//],
  ["nats.js", /@nats-io\//],
  ["socket.io", /(socket\.io|engine\.io)/],
  ["bench", /\/bench\//],
  ["node internals", /^node:/],
];

function area(node: Node): string {
  const { functionName, url } = node.callFrame;
  if (functionName === "(garbage collector)") return "GC";
  if (functionName === "(program)") return "program (native, outside JS)";
  if (!url) return `native: ${functionName || "(anonymous)"}`;
  for (const [name, re] of AREAS) if (re.test(url)) return name;
  return "other JS";
}

export function summarise(file: string, top = 15): string {
  const p = JSON.parse(readFileSync(file, "utf8")) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  p.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (p.timeDeltas[i] ?? 0)));
  const frames = new Map<string, number>();
  const areas = new Map<string, number>();
  let busy = 0;
  for (const [id, us] of self) {
    const n = byId.get(id)!;
    if (n.callFrame.functionName === "(idle)") continue;
    busy += us;
    const url = n.callFrame.url.replace(/^.*node_modules\/(\.pnpm\/[^/]+\/node_modules\/)?/, "").replace(/^.*\/packages\//, "packages/").replace(/^file:\/\//, "");
    const key = `${n.callFrame.functionName || "(anonymous)"} ${url ? `${url}:${n.callFrame.lineNumber + 1}` : ""}`.trim();
    frames.set(key, (frames.get(key) ?? 0) + us);
    const a = area(n);
    areas.set(a, (areas.get(a) ?? 0) + us);
  }
  const wall = (p.endTime - p.startTime) / 1e6;
  const pct = (us: number) => `${((100 * us) / busy).toFixed(1)}%`;
  const lines = [`${file.split("/").pop()}: ${(busy / 1e6).toFixed(1)} s busy of ${wall.toFixed(1)} s profiled`, "", "| area | self CPU |", "|:--|--:|"];
  for (const [a, us] of [...areas].sort((x, y) => y[1] - x[1]).slice(0, 10)) lines.push(`| ${a} | ${pct(us)} |`);
  lines.push("", "| top frame (self time) | self CPU |", "|:--|--:|");
  for (const [f, us] of [...frames].sort((x, y) => y[1] - x[1]).slice(0, top)) lines.push(`| \`${f}\` | ${pct(us)} |`);
  return lines.join("\n");
}

const args = process.argv.slice(2);
const t = args.indexOf("--top");
const top = t >= 0 ? Number(args.splice(t, 2)[1]) : 15;
for (const f of args) console.log(`${summarise(f, top)}\n`);
