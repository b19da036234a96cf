/** A stream's files in a stopped node's store, for the store-damage faults. */
import { readdirSync } from "node:fs";
import { join } from "node:path";

/** The message block files of `stream` under a node's data directory. */
export function blockFiles(root: string, stream: string): string[] {
  const found: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (!e.isDirectory()) continue;
      if (e.name === stream) {
        const msgs = join(p, "msgs");
        for (const f of readdirSync(msgs)) if (f.endsWith(".blk")) found.push(join(msgs, f));
      } else walk(p);
    }
  };
  walk(root);
  return found.sort((a, b) => parseInt(a.split("/").at(-1)!) - parseInt(b.split("/").at(-1)!));
}
