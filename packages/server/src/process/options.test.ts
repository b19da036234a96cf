import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "@tidemark/shared";
import {
  declarationDrift,
  decodeDeclaration,
  encodeDeclaration,
  resolveProcessOptions,
  retryDelay,
  type Declaration,
} from "./options.js";

const seq = (cursor: string) => {
  if (!cursor.startsWith("c")) throw new InvalidArgumentError("not a cursor");
  return Number(cursor.slice(1));
};
const base = { consumer: "search-index", start: "earliest" as const, delivery: { maxAttempts: 4, backoffMs: [1_000, 5_000] } };

describe("process options", () => {
  it("options - the retry delay follows the schedule and repeats its last step", () => {
    const schedule = [1_000, 5_000, 30_000];
    expect([1, 2, 3, 4, 9].map((a) => retryDelay(schedule, a))).toEqual([1_000, 5_000, 30_000, 30_000, 30_000]);
    expect(retryDelay([], 3)).toBe(0);
    expect(retryDelay([250], 1)).toBe(250);
  });

  it("options - defaults apply and the declaration records delivery settings, start and tenant", () => {
    const r = resolveProcessOptions({ ...base, tenantId: "acme", start: { after: "c41" } }, seq);
    expect(r.concurrency).toBe(1);
    expect(r.stopGraceMs).toBeUndefined();
    expect(r.start).toEqual({ kind: "after", sequence: 41 });
    expect(r.declaration).toEqual({ tenantId: "acme", start: "after:41", maxAttempts: 4, backoffMs: [1_000, 5_000], leaseMs: 3_000 });
    // The default lease is not declared: a worker adopts an existing consumer's.
    expect(r.leaseDeclared).toBe(false);
    expect(resolveProcessOptions({ ...base, delivery: { ...base.delivery, leaseMs: 3_000 } }, seq).leaseDeclared).toBe(true);
  });

  it("options - refuses bad consumer names, attempts, delays, concurrency and start with InvalidArgumentError", () => {
    const bad = [
      { ...base, consumer: "has.dot" },
      { ...base, consumer: "" },
      { ...base, consumer: "x".repeat(65) },
      { ...base, delivery: { maxAttempts: 0, backoffMs: [] } },
      { ...base, delivery: { maxAttempts: 1.5, backoffMs: [] } },
      { ...base, delivery: { maxAttempts: 2, backoffMs: [-1] } },
      { ...base, delivery: { maxAttempts: 2, backoffMs: "100" } },
      { ...base, delivery: { maxAttempts: 2, backoffMs: [], leaseMs: 10 } },
      { ...base, concurrency: 0 },
      { ...base, start: "beginning" },
      { ...base, start: { after: 5 } },
      { ...base, tenantId: "" },
    ];
    for (const options of bad) {
      expect(() => resolveProcessOptions(options as never, seq), JSON.stringify(options)).toThrow(InvalidArgumentError);
    }
    expect(() => resolveProcessOptions({ ...base, start: { after: "zz" } }, seq)).toThrow(InvalidArgumentError);
  });

  it("options - the declaration round-trips through a consumer description and drift names the fields", () => {
    const d: Declaration = { tenantId: null, start: "earliest", maxAttempts: 4, backoffMs: [1, 2], leaseMs: 30_000 };
    expect(decodeDeclaration(encodeDeclaration(d))).toEqual(d);
    expect(decodeDeclaration("made by hand")).toBeUndefined();
    expect(decodeDeclaration(undefined)).toBeUndefined();
    expect(declarationDrift(d, d)).toEqual([]);
    expect(declarationDrift(d, { ...d, maxAttempts: 5, backoffMs: [1], tenantId: "a", start: "latest", leaseMs: 1_000 })).toEqual([
      "tenantId",
      "start",
      "delivery.maxAttempts",
      "delivery.backoffMs",
      "delivery.leaseMs",
    ]);
    expect(declarationDrift(d, undefined)).toEqual(["consumer"]);
    // Without the lease (adopted, or compared with the ack wait instead).
    expect(declarationDrift(d, { ...d, leaseMs: 1_000 }, false)).toEqual([]);
  });
});
