import { describe, expect, it } from "vitest";
import { canMove, type StateKind } from "./state.js";

describe("connection state", () => {
  it("connection state - only the documented transitions are allowed; closed is terminal", () => {
    const kinds: StateKind[] = ["new", "open", "expired", "closed"];
    const allowed = kinds.flatMap((from) => kinds.filter((to) => canMove(from, to)).map((to) => `${from}->${to}`));
    expect(allowed).toEqual(["new->open", "new->closed", "open->open", "open->expired", "open->closed", "expired->open", "expired->closed"]);
  });
});
