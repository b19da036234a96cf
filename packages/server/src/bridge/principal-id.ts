/**
 * The principal id a client is told in `welcome` and `refreshed`: an opaque, stable key of the
 * principal (SHA-256 of the bridge's `principalKey`, base64url). The browser client keys its
 * saved history by it, so the next user of a shared browser profile never sees the previous
 * one's. It reveals nothing of the key itself and is the same on every bridge process.
 */
const PREFIX = "tidemark.principal.v1\u0000";

/** @internal */
export async function principalId(key: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(PREFIX + key)));
  let binary = "";
  for (const byte of digest) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
