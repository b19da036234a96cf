/**
 * Prints benchmark results as a fixed-width table with a ratio column and the target it is
 * held to; `failedTargets()` lists rows that missed theirs (a miss is reported, not fatal).
 */
import { cpus as cpus_, loadavg } from "node:os";
import type { Comparison } from "./measure.js";

export interface Row {
  /** What was measured, e.g. "publish, awaited one by one (5,000 events)". */
  name: string;
  /** Tidemark's median rate. */
  subject: number;
  /** The raw baseline's median rate; omit for a figure without a baseline. */
  baseline?: number;
  /** Lowest acceptable subject/baseline ratio. */
  target?: number;
  /** Unit of the rates. @default "events/s" */
  unit?: string;
  /** Client CPU per operation in microseconds, [subject, baseline] (see `Comparison.cpuMicros`). */
  cpuMicros?: [number, number];
}

/** A row from a {@link Comparison}: its median rates and CPU per operation. */
export function comparisonRow(name: string, c: Comparison, more: Partial<Row> = {}): Row {
  return { name, subject: c.subject, baseline: c.baseline, cpuMicros: [c.cpuMicros.subject, c.cpuMicros.baseline], ...more };
}

const fmtRate = (n: number | undefined) => (n === undefined ? "-" : Math.round(n).toLocaleString("en-US"));
const ratioOf = (r: Row) => (r.baseline === undefined ? undefined : r.subject / r.baseline);

/** True when the row has a target and its ratio is below it. */
export function missed(r: Row): boolean {
  const ratio = ratioOf(r);
  return r.target !== undefined && ratio !== undefined && ratio < r.target;
}

/** Column names of the two sides. @default { subject: "tidemark", baseline: "raw NATS" } */
export interface Sides {
  subject: string;
  baseline: string;
}

/** Renders rows as a Markdown table (readable in a terminal, pasteable into docs). */
export function renderTable(title: string, rows: readonly Row[], sides: Sides = { subject: "tidemark", baseline: "raw NATS" }): string {
  const header = ["benchmark", sides.subject, sides.baseline, "unit", "ratio", "target", "client CPU µs/op"];
  const body = rows.map((r) => {
    const ratio = ratioOf(r);
    return [
      r.name,
      fmtRate(r.subject),
      fmtRate(r.baseline),
      r.unit ?? "events/s",
      ratio === undefined ? "-" : ratio.toFixed(2),
      r.target === undefined ? "-" : `>= ${r.target.toFixed(2)}${missed(r) ? " MISSED" : " ok"}`,
      r.cpuMicros ? `${r.cpuMicros[0].toFixed(1)} / ${r.cpuMicros[1].toFixed(1)}` : "-",
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => (i === 0 || i === 3 || i === 5 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(" | ")} |`;
  const sep = `|${widths.map((w, i) => (i === 0 || i === 3 || i === 5 ? `:${"-".repeat(w + 1)}` : `${"-".repeat(w + 1)}:`)).join("|")}|`;
  return [`### ${title}`, "", line(header), sep, ...body.map(line), ""].join("\n");
}

/** Prints a table to stdout. */
export function printTable(title: string, rows: readonly Row[], sides?: Sides): void {
  console.log(renderTable(title, rows, sides));
}

/** Describes the machine, its load (other work skews every figure) and the server, for a report. */
export function environment(serverVersion?: string): string {
  const cpus = cpus_();
  return (
    `node ${process.version}, ${process.platform}/${process.arch}, ${cpus.length} x ${cpus[0]?.model.trim() ?? "cpu"}` +
    (serverVersion ? `, nats-server ${serverVersion}` : "") +
    `, load average ${loadavg()[0]!.toFixed(2)}`
  );
}
