import { describe, it, expect } from "vitest";
import fc from "fast-check";
import { InvalidArgumentError } from "./errors.js";
import {
  MAX_TENANT_BYTES,
  TOPIC_ID_PATTERN,
  assertTenantId,
  assertTopicId,
  decodeTenant,
  encodeTenant,
  topicFromToken,
  topicToken,
} from "./names.js";
import { utf8Length } from "./base64url.js";

// Tenant ids users send: plain ones, any well-formed Unicode, and strings built to look like
// tokens of other tenants ("~..." and "_").
const tenant = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9-]{1,40}$/),
  fc.string({ unit: "grapheme", minLength: 1, maxLength: 40 }),
  fc.string({ unit: "binary", minLength: 1, maxLength: 40 }),
  fc.string({ minLength: 0, maxLength: 30 }).map((s) => `~${s}`),
  fc.constantFrom("_", "~", ".", "*", ">", " ", "a.b", "a b"),
);

function typed<T>(fn: () => T): T | InvalidArgumentError {
  try {
    return fn();
  } catch (err) {
    if (err instanceof InvalidArgumentError && err.code === "INVALID_ARGUMENT") return err;
    throw err;
  }
}

describe("tenant and topic encoding (properties)", () => {
  it("tenant - every valid tenant id round-trips through one subject token; anything else is InvalidArgumentError", () => {
    fc.assert(
      fc.property(tenant, (id) => {
        const token = typed(() => encodeTenant(id));
        if (token instanceof InvalidArgumentError) {
          expect(typed(() => assertTenantId(id))).toBeInstanceOf(InvalidArgumentError);
          return;
        }
        expect(utf8Length(id)).toBeLessThanOrEqual(MAX_TENANT_BYTES);
        // One NATS subject token: no separator, wildcard or whitespace, never empty.
        expect(token).toMatch(/^[A-Za-z0-9_~-]+$/);
        expect(decodeTenant(token)).toBe(id);
      }),
      { numRuns: 5_000 },
    );
  });

  it("tenant - two different tenants never share a token (and none shares the no-tenant token)", () => {
    fc.assert(
      fc.property(tenant, tenant, (a, b) => {
        const ta = typed(() => encodeTenant(a));
        const tb = typed(() => encodeTenant(b));
        if (ta instanceof InvalidArgumentError || tb instanceof InvalidArgumentError) return;
        expect(ta === tb).toBe(a === b);
        expect(ta).not.toBe(encodeTenant(undefined));
      }),
      { numRuns: 5_000 },
    );
  });

  it("tenant - any token decodes to the tenant whose token it is, or raises InvalidArgumentError", () => {
    const token = fc.oneof(fc.string(), fc.string({ unit: "binary" }), fc.base64String().map((s) => `~${s.replace(/=+$/, "")}`), fc.string().map((s) => `~${s}`));
    fc.assert(
      fc.property(token, (t) => {
        const out = typed(() => decodeTenant(t));
        if (out instanceof InvalidArgumentError) return;
        // Canonical: the decoded tenant encodes back to exactly this token, so no other token
        // can stand for the same tenant.
        expect(encodeTenant(out)).toBe(t);
      }),
      { numRuns: 5_000 },
    );
  });

  it("tenant - assertTenantId takes any value and either accepts a string or raises InvalidArgumentError", () => {
    fc.assert(
      fc.property(fc.anything(), (v) => {
        const out = typed(() => assertTenantId(v));
        if (!(out instanceof InvalidArgumentError)) expect(typeof v).toBe("string");
      }),
    );
  });

  it("topic - valid ids round-trip through a dot-free token; any other value raises InvalidArgumentError", () => {
    const id = fc.oneof(fc.stringMatching(TOPIC_ID_PATTERN), fc.string({ maxLength: 140 }), fc.anything());
    fc.assert(
      fc.property(id, (v) => {
        const out = typed(() => assertTopicId(v));
        if (out instanceof InvalidArgumentError) return;
        const t = topicToken(v as string);
        expect(t).not.toContain(".");
        expect(t).toMatch(/^[a-z0-9_~-]+$/);
        expect(topicFromToken(t)).toBe(v);
      }),
      { numRuns: 5_000 },
    );
  });
});
