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
