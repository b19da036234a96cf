import { describe, it, expect } from "vitest";
import { decodeJwt, exportJWK, generateKeyPair } from "jose";
import { ErrorCode, InvalidArgumentError } from "@tidemark/shared";
import { tokenAuthenticator } from "./authenticate.js";
import { signToken } from "./sign.js";

const secret = "0123456789abcdef0123456789abcdef";

describe("signToken", () => {
  it("auth - an HS256 token signed by signToken is accepted by tokenAuthenticator with its sub, tenants and expiry", async () => {
    const before = Math.floor(Date.now() / 1000);
    const token = await signToken({ sub: "ada", tenants: ["acme", "globex"] }, { key: secret, expiresIn: 600 });
    const principal = await tokenAuthenticator({ key: secret })(token);
    expect(principal).toMatchObject({ id: "ada", tenants: ["acme", "globex"] });
    const exp = principal!.expiresAt! / 1000;
    expect(exp).toBeGreaterThanOrEqual(before + 600);
    expect(exp).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 600);
    // Another secret refuses it.
    expect(await tokenAuthenticator({ key: secret.replace("0", "x") })(token)).toBeUndefined();
  });

  it("auth - the default lifetime is one hour; issuer, audience and extra claims are kept and checked", async () => {
    const token = await signToken({ sub: "bob", role: "admin" }, { key: secret, issuer: "https://auth.example", audience: "tidemark" });
    const claims = decodeJwt(token);
    expect(claims.exp! - claims.iat!).toBe(3600);
    expect(claims).toMatchObject({ sub: "bob", role: "admin", iss: "https://auth.example", aud: "tidemark" });
    expect(await tokenAuthenticator({ key: secret, issuer: "https://auth.example", audience: "tidemark" })(token)).toMatchObject({ id: "bob" });
    expect(await tokenAuthenticator({ key: secret, issuer: "https://other.example" })(token)).toBeUndefined();
  });

  it("auth - an ES256 token signed with the private key is accepted with the public key", async () => {
    const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
    const token = await signToken({ sub: "ada" }, { key: privateKey, expiresIn: "5m" });
    expect(await tokenAuthenticator({ key: publicKey })(token)).toMatchObject({ id: "ada", tenants: [] });
    expect(await tokenAuthenticator({ key: await exportJWK(publicKey) })(token)).toMatchObject({ id: "ada" });
  });

  it("auth - a missing key, a short secret, an empty sub or a bad expiresIn is an InvalidArgumentError, not a token", async () => {
    const env: Record<string, string | undefined> = {};
    const bad: [Record<string, unknown>, Record<string, unknown>][] = [
      [{ sub: "ada" }, { key: env.TOKEN_SECRET }],
      [{ sub: "ada" }, { key: "" }],
      [{ sub: "ada" }, { key: "short" }],
      [{ sub: "" }, { key: secret }],
      [{}, { key: secret }],
      [{ sub: "ada" }, { key: secret, expiresIn: -5 }],
      [{ sub: "ada" }, { key: secret, expiresIn: 0 }],
      [{ sub: "ada" }, { key: secret, expiresIn: "soon" }],
    ];
    for (const [claims, options] of bad) {
      const call = signToken(claims as { sub: string }, options as { key: string });
      await expect(call, JSON.stringify([claims, options])).rejects.toThrow(InvalidArgumentError);
      await expect(call).rejects.toMatchObject({ code: ErrorCode.InvalidArgument });
    }
  });
});
