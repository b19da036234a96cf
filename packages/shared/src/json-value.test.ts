import { describe, it, expect } from "vitest";
import { InvalidArgumentError } from "./errors.js";
import { assertJsonValue } from "./json-value.js";

describe("assertJsonValue", () => {
  it("json - accepts JSON values, including shared (not cyclic) references and null-prototype objects", () => {
    const shared = { a: 1 };
    for (const v of [null, true, "s", 0, -0, 1.5, [], {}, [shared, shared], { x: shared, y: shared }, Object.create(null) as object, { u: undefined }]) {
      expect(() => assertJsonValue(v), JSON.stringify(v)).not.toThrow();
    }
  });

  it("json - refuses what JSON would drop or rewrite, naming the path", () => {
    const cases: [unknown, string][] = [
      [new Uint8Array(2), "data is a Uint8Array"],
      [{ s: new String("x") }, "data.s is a String"],
      [{ r: /x/ }, "data.r is a RegExp"],
      [{ "a-b": { c: [0, -Infinity] } }, 'data["a-b"].c[1] is a non-finite number (-Infinity)'],
      [[[undefined]], "data[0][0] is undefined"],
    ];
    for (const [value, message] of cases) {
      let err: unknown;
      try {
        assertJsonValue(value);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(InvalidArgumentError);
      expect((err as Error).message.startsWith(message), (err as Error).message).toBe(true);
    }
  });
});

describe("assertJsonValue, nested and repeated walks", () => {
  it("json - a check started inside another (a getter) does not see the outer walk's containers", () => {
    const inner = { k: 1 };
    const outer = {
      a: inner,
      get b() {
        // inner is open in the outer walk, not in this one: no cycle here.
        assertJsonValue({ again: inner });
        return 2;
      },
    };
    expect(() => assertJsonValue(outer)).not.toThrow();
  });

  it("json - a refused value leaves nothing behind: the next check of shared data passes", () => {
    const shared = { s: 1 };
    expect(() => assertJsonValue({ a: shared, bad: new Map() })).toThrow(InvalidArgumentError);
    expect(() => assertJsonValue([shared, shared])).not.toThrow();
    const cyclic: unknown[] = [];
    cyclic.push([cyclic]);
    expect(() => assertJsonValue(cyclic)).toThrow(/data\[0\]\[0\] is a cycle/);
  });
});
