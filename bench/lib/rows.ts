/**
 * `BENCH_ROWS=c,c'`: run only the chosen rows of a benchmark (a quicker A/B of one figure on a
 * shared machine). Unset or empty: every row. An unknown name fails at once, naming the known ones.
 */
export function chosenRows(value: string | undefined, known: readonly string[]): (row: string) => boolean {
  const names = (value ?? "").split(",").map((s) => s.trim()).filter((s) => s !== "");
  if (names.length === 0) return () => true;
  for (const n of names) if (!known.includes(n)) throw new Error(`BENCH_ROWS: unknown row ${n}; have ${known.join(",")}`);
  const set = new Set(names);
  return (row) => set.has(row);
}

/** `run()` when `row` is chosen, else undefined (its table line is left out). */
export async function ifChosen<R>(want: (row: string) => boolean, row: string, run: () => Promise<R>): Promise<R | undefined> {
  return want(row) ? run() : undefined;
}
