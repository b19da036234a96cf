/**
 * Summarises a `.cpuprofile` (from `node --cpu-prof`): the top functions by self time and by
 * total time (inclusive, each function counted once per sample), as shares of all samples.
 *   tsx bench/lib/profile-summary.ts <file.cpuprofile | dir> [top=20] [regexp]
 * With a regexp, only frames whose label matches it (e.g. "tidemark|packages/").
 * Given a directory (`--cpu-prof-dir`), reads its largest profile: the main thread's (tsx's
 * loader thread writes a small one beside it).
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { CpuProfile as Profile, ProfileNode as Node } from "./cpuprofile.js";


const [given, topArg, grep] = process.argv.slice(2);
if (!given) throw new Error("usage: profile-summary <file.cpuprofile | dir> [top]");
const file = statSync(given).isDirectory()
  ? readdirSync(given)
      .filter((f) => f.endsWith(".cpuprofile"))
      .map((f) => join(given, f))
      .sort((a, b) => statSync(b).size - statSync(a).size)[0]!
  : given;
const top = Number(topArg ?? 20);
const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

const short = (url: string) => url.replace(/^.*\/node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?/, "").replace(/^.*\/packages\//, "packages/").replace(/^file:\/\//, "");
const label = (n: Node) => {
  const f = n.callFrame;
  return `${f.functionName || "(anonymous)"} ${f.url ? `${short(f.url)}:${f.lineNumber + 1}` : ""}`.trim();
};

const self = new Map<string, number>();
const total = new Map<string, number>();
let idle = 0;
for (const id of profile.samples) {
  const leaf = byId.get(id)!;
  const name = label(leaf);
  if (leaf.callFrame.functionName === "(idle)") idle++;
  self.set(name, (self.get(name) ?? 0) + 1);
  const seen = new Set<string>();
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
    const l = label(byId.get(at)!);
    if (!seen.has(l)) total.set(l, (total.get(l) ?? 0) + 1);
    seen.add(l);
  }
}
const busy = profile.samples.length - idle;
const ms = (profile.endTime - profile.startTime) / 1000 / profile.samples.length;
const pct = (n: number) => `${((100 * n) / busy).toFixed(1)}% ${Math.round(n * ms)} ms`.padStart(14);
const show = (title: string, m: Map<string, number>) => {
  console.log(`\n${title} (share of ${busy} non-idle samples)`);
  const wanted = grep ? new RegExp(grep) : undefined;
  for (const [k, v] of [...m].filter(([k]) => !k.startsWith("(idle)") && !k.startsWith("(root)") && (!wanted || wanted.test(k))).sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${pct(v).padStart(6)}  ${k}`);
  }
};
console.log(`${file}: ${profile.samples.length} samples, ${idle} idle`);
show("self", self);
show("total", total);
