import { describe, it, expect } from "vitest";
import { SignJWT } from "jose";
import { ErrorCode, InvalidArgumentError } from "@tidemark/shared";
import { tokenAuthenticator } from "./authenticate.js";

const secret = "0123456789abcdef0123456789abcdef";
/** Signs `claims` for sub "u1"; `exp` null leaves the token without expiry. */
const sign = (claims: Record<string, unknown>, exp: number | null = Math.floor(Date.now() / 1000) + 60) => {
  const jwt = new SignJWT(claims).setProtectedHeader({ alg: "HS256" }).setSubject("u1");
  if (exp !== null) jwt.setExpirationTime(exp);
  return jwt.sign(new TextEncoder().encode(secret));
};

describe("tokenAuthenticator", () => {
  it("auth - maps sub, tenants and exp to the principal", async () => {
    const exp = Math.floor(Date.now() / 1000) + 60;
    const p = await tokenAuthenticator({ key: secret })(await sign({ tenants: ["a", 5, "b"] }, exp));
    expect(p).toMatchObject({ id: "u1", tenants: ["a", "b"], expiresAt: exp * 1000 });
  });

  it("auth - refuses tokens without exp unless allowed, and revoked ones", async () => {
    const noExp = await sign({}, null);
    expect(await tokenAuthenticator({ key: secret })(noExp)).toBeUndefined();
    expect(await tokenAuthenticator({ key: secret, allowNoExpiry: true })(noExp)).toMatchObject({ id: "u1", expiresAt: undefined });
    const revoked = tokenAuthenticator({ key: secret, isRevoked: (c) => c.sub === "u1" });
    expect(await revoked(await sign({}))).toBeUndefined();
  });

  it("auth - a missing or empty key (an unset environment variable) fails at creation with a typed error", () => {
    const env: Record<string, string | undefined> = {};
    for (const key of [env.TOKEN_SECRET, "", null, new Uint8Array(0)]) {
      const create = () => tokenAuthenticator({ key: key as string });
      expect(create, String(key)).toThrow(InvalidArgumentError);
      expect(create, String(key)).toThrow(expect.objectContaining({ code: ErrorCode.InvalidArgument }));
    }
    expect(() => tokenAuthenticator({ key: 42 as unknown as string })).toThrow(InvalidArgumentError);
  });

  it("auth - the authenticate function takes (token, request) as the bridge calls it", async () => {
    const seen: (Request | undefined)[] = [];
    const auth = tokenAuthenticator({ key: secret, isRevoked: (_c, request) => (seen.push(request), false) });
    const request = new Request("http://127.0.0.1/ws", { headers: { origin: "http://127.0.0.1" } });
    expect(await auth(await sign({}), request)).toMatchObject({ id: "u1" });
    expect(seen).toEqual([request]);
  });

  it("auth - a short HS256 secret is refused at setup; a custom principal is used", async () => {
    expect(() => tokenAuthenticator({ key: "short" })).toThrow(InvalidArgumentError);
    expect(() => tokenAuthenticator({ key: "short" })).toThrow(/32 bytes/);
    const auth = tokenAuthenticator({ key: secret, principal: (c) => `user:${String(c.sub)}` });
    expect(await auth(await sign({}))).toBe("user:u1");
  });

  it("auth - a sub that is not a non-empty string is refused like a bad token", async () => {
    const auth = tokenAuthenticator({ key: secret });
    for (const sub of [{ id: "u1" }, ["u1"], 7, ""]) {
      const token = await new SignJWT({ sub } as Record<string, unknown>)
        .setProtectedHeader({ alg: "HS256" })
        .setExpirationTime("1m")
        .sign(new TextEncoder().encode(secret));
      expect(await auth(token), JSON.stringify(sub)).toBeUndefined();
    }
  });
});
