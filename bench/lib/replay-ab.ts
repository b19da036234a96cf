/**
 * A/B of the core's read rows between two worktrees on a shared, noisy machine: runs
 * `pnpm bench core` with BENCH_ROWS (default c') in A, then B, alternately, `pairs` times, and
 * prints each run's ratio and client CPU, then the medians per side with the load average.
 *
 *   tsx bench/lib/replay-ab.ts <dir A> <dir B> [pairs=9]    (BENCH_ROWS, BENCH_SERVERS passed on;
 *                                                            BENCH_SERVERS defaults to buffered)
 * Both worktrees need a bench/core.bench.ts that knows BENCH_ROWS.
 */
import { spawnSync } from "node:child_process";
import { loadavg } from "node:os";
import { median } from "./measure.js";

const [dirA, dirB, pairsArg] = process.argv.slice(2);
if (!dirA || !dirB) throw new Error("usage: replay-ab.ts <dir A> <dir B> [pairs]");
const pairs = Number(pairsArg ?? 9);
const rows = process.env.BENCH_ROWS ?? "c'";
const env = { ...process.env, BENCH_ROWS: rows, BENCH_SERVERS: process.env.BENCH_SERVERS ?? "buffered" };

interface Reading {
  ratio: number;
  /** Client CPU per event, tidemark / raw. */
  cpu: number;
}

/** The first table row of the chosen row: `| (c') ... | ratio | target | cpu a / cpu b |`. */
function runIn(dir: string): Reading {
  const out = spawnSync("pnpm", ["-s", "bench", "core"], { cwd: dir, env, encoding: "utf8" });
  const row = rows.split(",")[0]!.trim();
  const line = out.stdout.split("\n").find((l) => l.startsWith(`| (${row})`));
  if (out.status !== 0 || line === undefined) throw new Error(`bench failed in ${dir}:\n${out.stdout}\n${out.stderr}`);
  const cells = line.split("|").map((c) => c.trim());
  const [subject, baseline] = cells[7]!.split("/").map(Number);
  return { ratio: Number(cells[5]), cpu: subject! / baseline! };
}

const results: Record<"A" | "B", Reading[]> = { A: [], B: [] };
for (let i = 0; i < pairs; i++) {
  for (const [side, dir] of [["A", dirA], ["B", dirB]] as const) {
    const r = runIn(dir);
    results[side].push(r);
    const load = loadavg().map((x) => x.toFixed(2)).join(" ");
    console.log(`pair ${i + 1} ${side}: (${rows}) ratio ${r.ratio.toFixed(2)}, CPU vs raw ${r.cpu.toFixed(3)}x, load ${load}, ${new Date().toISOString()}`);
  }
}
for (const side of ["A", "B"] as const) {
  const rs = results[side];
  console.log(`${side} (${side === "A" ? dirA : dirB}): median ratio ${median(rs.map((r) => r.ratio)).toFixed(2)}, median CPU vs raw ${median(rs.map((r) => r.cpu)).toFixed(3)}x over ${rs.length} runs`);
}
