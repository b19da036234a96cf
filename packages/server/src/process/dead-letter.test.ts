import { describe, expect, it } from "vitest";
import type { Cursor } from "@tidemark/shared";
import { decodeDeadLetterRecord, describeError, encodeDeadLetter, MAX_ERROR_MESSAGE, toDeadLetter, type DeadLetterRecord } from "./dead-letter.js";

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
    expect(describeError(new Error("x".repeat(10_000))).message.length).toBe(MAX_ERROR_MESSAGE);
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
