import { describe, it, expect } from "vitest";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSync } from "../../src/index.js";
import { uniqueNamespace } from "@tidemark/testing";
import { alive, exited, firstLine, gone, spawnFixture } from "./fixtures/run.js";

const EVENTS = 3;

describe("embedded nats-server lifecycle", () => {
  const cases = [
    { name: "SIGINT of the parent", signal: "SIGINT", group: false },
    { name: "SIGTERM of the parent", signal: "SIGTERM", group: false },
    { name: "SIGKILL of the parent", signal: "SIGKILL", group: false },
    // Ctrl-C in a terminal: SIGINT reaches the whole process group, nats-server included.
    { name: "SIGINT to the parent's process group", signal: "SIGINT", group: true },
  ] as const;
  for (const { name, signal, group } of cases) {
    it(`embedded - ${name} leaves no nats-server behind and the store survives a new start`, async () => {
      const dataDir = mkdtempSync(join(tmpdir(), "tidemark-orphan-"));
      const namespace = uniqueNamespace();
      const child = spawnFixture("publisher.ts", [dataDir, namespace, String(EVENTS)], { detached: group });
      try {
        expect(await firstLine<{ published: number }>(child)).toEqual({ published: EVENTS });
        const natsPid = Number(readFileSync(join(dataDir, "nats", "nats-server.pid"), "utf8"));
        expect(alive(natsPid)).toBe(true);

        if (group) process.kill(-child.pid!, signal);
        else child.kill(signal);
        await exited(child);
        expect(await gone(natsPid), `nats-server ${natsPid} outlived its parent after ${signal}`).toBe(true);

        // A new start on the same data dir works and holds what the dead parent published.
        const sync = createSync({ namespace, embedded: { dataDir, websocket: false } });
        try {
          const topic = sync.topic<{ n: number }>({ id: "orphan.events" });
          const seen: number[] = [];
          for await (const e of topic.replay()) seen.push(e.data.n);
          expect(seen).toEqual([1, 2, 3]);
          expect((await topic.publish({ data: { n: 4 } })).streamSequence).toBe(EVENTS + 1);
        } finally {
          await sync.close();
        }
        const second = Number(readFileSync(join(dataDir, "nats", "nats-server.pid"), "utf8"));
        expect(second).not.toBe(natsPid);
        expect(await gone(second)).toBe(true);
      } finally {
        child.kill("SIGKILL");
        rmSync(dataDir, { recursive: true, force: true });
      }
    });
  }
});
