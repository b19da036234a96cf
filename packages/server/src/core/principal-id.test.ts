import { describe, it, expect } from "vitest";
import { principalId, principalIdWeb } from "./principal-id.js";

describe("principal id", () => {
  it("principal id - the Node hash gives the same id as the portable Web Crypto form", async () => {
    for (const key of ["", "alice", "user:42", "ünïcødé ✓", "x".repeat(5_000)]) {
      const id = await principalId(key);
      expect(id).toBe(await principalIdWeb(key));
      expect(id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    }
  });
});
