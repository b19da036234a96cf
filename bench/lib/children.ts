/**
 * On Ctrl-C or SIGTERM, a benchmark that started servers (bridges, load generators, nats-server)
 * kills every process below it before it exits. Its children do not all stop on the signal the
 * terminal sends them: a bridge draining towards a nats-server that has just exited waits out its
 * drain, and a benchmark that exits on the signal never reaches its `finally`. Linux only (/proc);
 * elsewhere the children are left as before.
 */
import { readdirSync, readFileSync } from "node:fs";

/** Every live process below `root` (children first found, then theirs), from /proc. */
export function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    try {
      // The command may hold spaces and parentheses: the fields after the last ") " are fixed.
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(") ") + 2).split(" ")[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(name));
      children.set(ppid, list);
    } catch {
      // gone meanwhile
    }
  }
  const found = [...(children.get(root) ?? [])];
  for (let i = 0; i < found.length; i++) found.push(...(children.get(found[i]!) ?? []));
  return found;
}

/**
 * Installs the handlers: on SIGINT or SIGTERM, SIGKILL every descendant, run `cleanup` (a temp
 * directory, say), and exit 130. Returns the function that removes them again.
 */
export function killChildrenOnSignal(cleanup: () => void = () => undefined): () => void {
  const onSignal = () => {
    for (const pid of descendants(process.pid)) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    try {
      cleanup();
    } finally {
      process.exit(130);
    }
  };
  process.on("SIGINT", onSignal).on("SIGTERM", onSignal);
  return () => process.off("SIGINT", onSignal).off("SIGTERM", onSignal);
}
