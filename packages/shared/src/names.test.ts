import { describe, it, expect } from "vitest";
import { assertTopicId, decodeTenant, encodeTenant, topicFromToken, topicToken } from "./names.js";
import { InvalidArgumentError } from "./errors.js";

describe("names", () => {
  it("tenant - encoding is one subject token and round-trips", () => {
    for (const t of ["a", "A-1", "with.dot", "sp ace", "*", ">", "~x", "_", "é📦", "x".repeat(256)]) {
      const token = encodeTenant(t);
      expect(token).toMatch(/^[A-Za-z0-9_~-]+$/);
      expect(decodeTenant(token)).toBe(t);
    }
    expect(encodeTenant(undefined)).toBe("_");
    expect(decodeTenant("_")).toBeUndefined();
    expect(encodeTenant("plain-1")).toBe("plain-1");
  });

  it("tenant - empty, too long and malformed ids are refused", () => {
    for (const t of ["", "x".repeat(257), "\uDC00"]) expect(() => encodeTenant(t)).toThrow(InvalidArgumentError);
    for (const token of ["~", "~!!", "a.b", "~cGxhaW4"]) expect(() => decodeTenant(token)).toThrow(InvalidArgumentError);
  });

  it("topic - ids map to one token and back", () => {
    for (const id of ["inventory.events", "a_b.c-d", "x"]) {
      assertTopicId(id);
      expect(topicToken(id)).not.toContain(".");
      expect(topicFromToken(topicToken(id))).toBe(id);
    }
  });
});
