import { describe, expect, it } from "vitest";
import { CloseCode, ErrorCode } from "@tidemark/shared";
import { finalRefusal } from "./refusal.js";

describe("refusal", () => {
  it("refusal - 4403 is ORIGIN_REFUSED at once, with the server's reason and the page's origin", () => {
    const error = finalRefusal({ code: CloseCode.OriginRefused, reason: "origin not allowed", tokenRefusals: 0, origin: "http://localhost:5173" });
    expect(error).toMatchObject({ code: ErrorCode.OriginRefused, name: "OriginRefusedError" });
    expect(error?.message).toContain("origin not allowed");
    expect(error?.message).toContain("http://localhost:5173");
  });

  it("refusal - 4401 is final only when the token was refused twice in a row (the second one fresh)", () => {
    expect(finalRefusal({ code: CloseCode.Unauthorized, reason: "authentication failed", tokenRefusals: 1 })).toBeUndefined();
    expect(finalRefusal({ code: CloseCode.Unauthorized, reason: "authentication failed", tokenRefusals: 2 })).toMatchObject({
      code: ErrorCode.Unauthorized,
      name: "UnauthorizedError",
      message: expect.stringContaining("authentication failed"),
    });
  });

  it("refusal - everything else is retried: drops, drain, timeouts, limits, server errors", () => {
    for (const code of [1000, 1001, 1006, 1011, 1013, CloseCode.Timeout, CloseCode.TooManyConnections, CloseCode.InternalError, CloseCode.ProtocolError]) {
      expect(finalRefusal({ code, reason: "", tokenRefusals: 5 }), String(code)).toBeUndefined();
    }
  });
});
