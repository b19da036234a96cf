import { describe, expect, it } from "vitest";
import type { Cursor } from "@tidemark/shared";
import {
  decodeDeadLetterRecord,
  describeError,
  encodeDeadLetter,
  MAX_ERROR_MESSAGE_BYTES,
  MAX_ERROR_NAME_BYTES,
  toDeadLetter,
  type DeadLetterRecord,
} from "./dead-letter-record.js";

describe("dead-letter records", () => {
  it("dead-letter - describes Errors, error-like objects and any thrown value", () => {
    class QuotaError extends Error {
      override name = "QuotaError";
    }
    expect(describeError(new QuotaError("over"))).toEqual({ name: "QuotaError", message: "over" });
    expect(describeError({ name: "Remote", message: "far" })).toEqual({ name: "Remote", message: "far" });
    expect(describeError("boom")).toEqual({ name: "NonError", message: "boom" });
    expect(describeError(null)).toEqual({ name: "NonError", message: "null" });
    expect(describeError(undefined)).toEqual({ name: "NonError", message: "undefined" });
    expect(describeError(10n)).toEqual({ name: "NonError", message: "10" });
    expect(describeError(Symbol("s"))).toEqual({ name: "NonError", message: "Symbol(s)" });
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(describeError(cyclic)).toEqual({ name: "NonError", message: "[object Object]" });
    const bytes = (text: string) => new TextEncoder().encode(JSON.stringify(text)).length - 2;
    const long = describeError(new Error("x".repeat(10_000)));
    expect(long.message.endsWith("…")).toBe(true);
    expect(bytes(long.message)).toBeLessThanOrEqual(MAX_ERROR_MESSAGE_BYTES);
    expect(long.message.length).toBeGreaterThan(MAX_ERROR_MESSAGE_BYTES / 2);
    // Control characters escape to 6 bytes each, CJK takes 3: the cap is in encoded bytes.
    for (const unit of ["\u0001", "漢", "😀"]) {
      const e = Object.assign(new Error(unit.repeat(5_000)), { name: unit.repeat(1_000) });
      const d = describeError(e);
      expect(bytes(d.message)).toBeLessThanOrEqual(MAX_ERROR_MESSAGE_BYTES);
      expect(bytes(d.name)).toBeLessThanOrEqual(MAX_ERROR_NAME_BYTES);
      expect(d.message.startsWith(unit)).toBe(true);
      expect(d.message).not.toMatch(/[\uD800-\uDBFF]…$/);
    }
    expect(describeError(new Error("short")).message).toBe("short");
  });

  it("dead-letter - a record round-trips and keeps the whole event", () => {
    const record: DeadLetterRecord = {
      v: 1,
      consumer: "mailer",
      attempts: 3,
      error: { name: "Error", message: "smtp down" },
      deadLetteredAt: 1_700_000_000_000,
      event: { eventId: "inc-7", cursor: "s6t.x" as Cursor, streamSequence: 7, tenantId: "t1", data: { to: "a@b" }, publishedAt: 1 },
    };
    const decoded = decodeDeadLetterRecord(encodeDeadLetter(record));
    expect(decoded).toEqual(record);
    expect(toDeadLetter(decoded as DeadLetterRecord, 12)).toEqual({
      event: record.event,
      consumer: "mailer",
      attempts: 3,
      error: record.error,
      deadLetteredAt: record.deadLetteredAt,
      sequence: 12,
    });
    expect(decodeDeadLetterRecord("not json")).toBeUndefined();
    expect(decodeDeadLetterRecord('{"v":2}')).toBeUndefined();
  });
});
