import { describe, expect, it } from "vitest";
import { cursorWithPrefix } from "@tidemark/shared";
import { ReadLog, covers } from "./read-log.js";

const P = "s6t.WzEsIm5zIiwidCIsImluYyJd.";
const c = (seq: number) => cursorWithPrefix(P, seq);

describe("read log", () => {
  it("read log - a read made here shows at once, never moves back, and is pending until the server covers it", () => {
    const log = new ReadLog();
    expect(log.markRead(c(5))).toBe(true);
    expect(log.markRead(c(3))).toBe(false);
    expect(log.view()).toEqual({ cursor: c(5), items: [] });
    expect(log.next()).toEqual({ cursor: c(5) });
    expect(log.markItem("e7", c(7))).toBe(true);
    expect(log.markItem("e4", c(4))).toBe(false); // below the cursor: read already
    expect(log.view()).toEqual({ cursor: c(5), items: ["e7"] });
    // The server confirms the cursor: only the item is left to send.
    log.fromServer({ cursor: c(5), items: [], version: 1 });
    expect(log.next()).toEqual({ item: c(7) });
    // The server is further on (another device): it wins, nothing is pending.
    expect(log.fromServer({ cursor: c(9), items: [], version: 2 })).toBe(true);
    expect(log.next()).toBeUndefined();
    expect(log.view()).toEqual({ cursor: c(9), items: [] });
    // An older version is ignored.
    expect(log.fromServer({ cursor: c(2), items: [], version: 1 })).toBe(false);
    expect(log.markRead(c(8))).toBe(false);
  });

  it("read log - saved and read again (a closed tab's offline read), a refused write is dropped", () => {
    const log = new ReadLog();
    log.markRead(c(4));
    log.markItem("e6", c(6));
    const again = new ReadLog(JSON.parse(JSON.stringify(log.save())));
    expect(again.next()).toEqual({ cursor: c(4) });
    again.drop({ cursor: c(4) });
    expect(again.next()).toEqual({ item: c(6) });
    expect(covers(c(4), c(4))).toBe(true);
    expect(covers(c(4), c(5))).toBe(false);
    expect(covers("s6t.other.9", c(5))).toBe(false); // another incarnation covers nothing
  });
});
