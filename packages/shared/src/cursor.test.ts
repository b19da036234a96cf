import { describe, it, expect } from "vitest";
import { decodeCursor, encodeCursor, isCursor, cursorPrefix, cursorWithPrefix } from "./cursor.js";
import { InvalidCursorError } from "./errors.js";

describe("cursor codec", () => {
  it("cursor - encodes and decodes every part", () => {
    const parts = { namespace: "app", topic: "inventory.events", incarnation: "k3j9x2ab01", sequence: 123456789 };
    const c = encodeCursor(parts);
    expect(c.startsWith("s6t.")).toBe(true);
    expect(decodeCursor(c)).toEqual(parts);
    expect(cursorWithPrefix(cursorPrefix(parts), 7)).toBe(encodeCursor({ ...parts, sequence: 7 }));
    expect(decodeCursor(encodeCursor({ ...parts, sequence: 0, incarnation: "" }))).toEqual({ ...parts, sequence: 0, incarnation: "" });
  });

  it("cursor - anything else is an InvalidCursorError", () => {
    const good = encodeCursor({ namespace: "a", topic: "b", incarnation: "c", sequence: 5 });
    const bad: unknown[] = [undefined, null, 5, {}, "", "s6t.", "s6t.x", "S6T." + good.slice(4), good + "!", good.replace(/\.5$/, ".-5"),
      good.replace(/\.5$/, ".05"), good.replace(/\.5$/, ".zzzzzzzzzzzzzzzz"), "s6t." + "A".repeat(2000) + ".1", good.slice(0, 10) + "." + good.slice(10)];
    for (const b of bad) {
      expect(() => decodeCursor(b), String(b)).toThrow(InvalidCursorError);
      expect(isCursor(b)).toBe(false);
    }
    expect(() => encodeCursor({ namespace: "a", topic: "b", incarnation: "", sequence: -1 })).toThrow(InvalidCursorError);
  });
});
