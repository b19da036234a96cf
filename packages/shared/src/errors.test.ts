import { describe, it, expect } from "vitest";
import {
  ErrorCode,
  errorClasses,
  TidemarkError,
  PayloadTooLargeError,
  ResourceDriftError,
  RetentionGapError,
  WorkerStopTimeoutError,
} from "./errors.js";
import { fromErrorPayload, toErrorPayload } from "./error-payload.js";

describe("errors", () => {
  it("errors - name, code and cause are set", () => {
    const cause = new Error("root");
    const e = new ResourceDriftError("drift", ["owner"], { cause });
    expect(e.name).toBe("ResourceDriftError");
    expect(e.code).toBe(ErrorCode.ResourceDrift);
    expect(e.cause).toBe(cause);
  });

  it("errors - survive a structured clone by code, with their details", () => {
    const samples = [
      new RetentionGapError("gap", { requestedSequence: 3, firstAvailableSequence: 9 }),
      new PayloadTooLargeError("big", { size: 10, limit: 5 }),
      new ResourceDriftError("drift", ["owner", "replicas"]),
      new WorkerStopTimeoutError("stuck", { timeoutMs: 300, handlers: [{ consumer: "c", eventId: "e", streamSequence: 1, attempt: 2, runningMs: 400 }] }),
    ];
    for (const e of samples) {
      const back = fromErrorPayload(structuredClone(toErrorPayload(e)));
      expect(back.constructor).toBe(e.constructor);
      expect(back).toMatchObject({ name: e.name, code: e.code, message: e.message });
    }
    expect(fromErrorPayload(toErrorPayload(samples[0]))).toMatchObject({ requestedSequence: 3, firstAvailableSequence: 9 });
    expect(fromErrorPayload(structuredClone(toErrorPayload(samples[3])))).toMatchObject({
      code: "WORKER_STOP_TIMEOUT",
      timeoutMs: 300,
      handlers: [{ consumer: "c", eventId: "e", streamSequence: 1, attempt: 2, runningMs: 400 }],
    });
    expect(toErrorPayload(new TypeError("x"))).toMatchObject({ code: "INTERNAL", name: "TypeError" });
  });

  it("errors - every code in the table has a class of its own, and it survives a structured clone", () => {
    for (const code of Object.values(ErrorCode)) {
      const Class = errorClasses[code];
      expect(Class, code).toBeDefined();
      expect(Class, code).not.toBe(TidemarkError);
      const made = fromErrorPayload({ code, name: "ignored", message: `a ${code}` });
      expect(made, code).toBeInstanceOf(Class);
      expect(made).toMatchObject({ code, name: Class.name, message: `a ${code}` });
      const back = fromErrorPayload(structuredClone(toErrorPayload(made)));
      expect(back.constructor, code).toBe(Class);
      expect(back).toMatchObject({ code, name: Class.name, message: `a ${code}` });
      expect(toErrorPayload(back)).toEqual(toErrorPayload(made));
    }
    // A code from a newer peer is an InternalError, never a bare TidemarkError.
    expect(fromErrorPayload({ code: "FROM_THE_FUTURE" as ErrorCode, name: "X", message: "m" })).toBeInstanceOf(errorClasses.INTERNAL);
  });
});
