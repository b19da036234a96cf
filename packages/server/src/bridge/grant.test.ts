import { describe, it, expect } from "vitest";
import { WHOLE_TOPIC, grants, refusal } from "./grant.js";

describe("grant", () => {
  it("grant - true grants a tenant only; the whole topic needs WHOLE_TOPIC or { wholeTopic: true }", () => {
    expect(grants(true, "acme")).toBe(true);
    expect(grants(true, undefined)).toBe(false);
    expect(grants(WHOLE_TOPIC, undefined)).toBe(true);
    expect(grants({ wholeTopic: true }, undefined)).toBe(true);
    expect(grants(WHOLE_TOPIC, "acme")).toBe(true);
    expect(Object.isFrozen(WHOLE_TOPIC)).toBe(true);
  });

  it("grant - anything else refuses, whatever the tenant", () => {
    for (const answer of [false, undefined, null, 1, "true", "wholeTopic", {}, { wholeTopic: 1 }, { wholeTopic: "true" }, [true], () => true]) {
      expect(grants(answer, undefined), String(answer)).toBe(false);
      expect(grants(answer, "acme"), String(answer)).toBe(false);
    }
  });

  it("grant - the refusal of a tenant-less subscribe answered true names the grant", () => {
    expect(refusal(true, undefined)).toContain("WHOLE_TOPIC");
    expect(refusal(false, undefined)).not.toContain("WHOLE_TOPIC");
    expect(refusal(true, "acme")).not.toContain("WHOLE_TOPIC");
  });
});
