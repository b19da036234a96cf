/**
 * The principal id a client is told in `welcome` and `refreshed`: an opaque, stable key of the
 * principal (SHA-256 of the bridge's `principalKey`, base64url). The browser client keys its
 * saved history by it, so the next user of a shared browser profile never sees the previous
 * one's. It reveals nothing of the key itself and is the same on every bridge process.
 */
const PREFIX = "tidemark.principal.v1\u0000";

interface NodeCrypto {
  createHash(algorithm: "sha256"): { update(data: string): { digest(encoding: "base64url"): string } };
}
// Node (and Deno, Bun) hash 50 bytes synchronously in a few µs; Web Crypto's digest is a
// thread-pool job and a promise, which a reconnect storm pays once per `hello`.
const nodeCrypto = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule?.("node:crypto") as
  | NodeCrypto
  | undefined;

/** @internal The portable form (Web Crypto), for runtimes without `node:crypto`. */
export async function principalIdWeb(key: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(PREFIX + key)));
  let binary = "";
  for (const byte of digest) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** @internal */
export async function principalId(key: string): Promise<string> {
  if (nodeCrypto) return nodeCrypto.createHash("sha256").update(PREFIX + key).digest("base64url");
  return principalIdWeb(key);
}
