/**
 * @internal The key check shared by `tokenAuthenticator` and `signToken`: a missing key (an unset
 * environment variable) or a short HS256 secret fails when the function is made, not at the
 * first token, where it would only refuse every token without a word.
 */
import { InvalidArgumentError } from "@tidemark/shared";

const encoder = new TextEncoder();

/** An HS256 secret shorter than this is refused (RFC 7518 §3.2: at least the hash's size). */
export const MIN_SECRET_BYTES = 32;

/** What a key option may be; a secret (string or bytes) means HS256. */
export type KeyInput<K> = string | Uint8Array | K;

/**
 * Checks `key` and turns a string secret into bytes. `where` names the function in the error.
 * Returns `{ secret: true, key: bytes }` for an HS256 secret, else the key as given.
 */
export function checkedKey<K extends object>(where: string, key: KeyInput<K> | undefined | null): { secret: true; key: Uint8Array } | { secret: false; key: K } {
  if (key === undefined || key === null || key === "") {
    throw new InvalidArgumentError(
      `${where}: \`key\` is ${key === "" ? "an empty string" : String(key)}: pass the secret or key (is the environment variable that holds it set?)`,
    );
  }
  if (typeof key === "string" || key instanceof Uint8Array) {
    const bytes = typeof key === "string" ? encoder.encode(key) : key;
    if (bytes.length < MIN_SECRET_BYTES) {
      throw new InvalidArgumentError(`${where}: an HS256 secret must be at least ${MIN_SECRET_BYTES} bytes (got ${bytes.length})`);
    }
    return { secret: true, key: bytes };
  }
  if (typeof key !== "object" && typeof key !== "function") {
    throw new InvalidArgumentError(`${where}: \`key\` must be a secret (string or bytes), a key, a JWK or a key-set getter (got ${typeof key})`);
  }
  return { secret: false, key };
}
