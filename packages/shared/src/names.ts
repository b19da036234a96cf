/**
 * Validation and encoding of topic ids, namespaces and tenant ids. Tenants become one NATS
 * subject token each; the encoding is injective so that no two tenants share a subject.
 */
import { InvalidArgumentError } from "./errors.js";
import { fromBase64Url, toBase64Url, utf8Length } from "./base64url.js";

/** Topic ids: lower case letters, digits, `.`, `_` and `-`; at most 128 characters. */
export const TOPIC_ID_PATTERN = /^[a-z0-9][a-z0-9._-]{0,127}$/;
/** Namespaces: lower case letters, digits and `-`; at most 32 characters. */
export const NAMESPACE_PATTERN = /^[a-z0-9][a-z0-9-]{0,31}$/;
/** Longest tenant id, in UTF-8 bytes. */
export const MAX_TENANT_BYTES = 256;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const PLAIN_TENANT = /^[A-Za-z0-9-]+$/;
/** The subject token of events published without a tenant. */
export const NO_TENANT_TOKEN = "_";

/** Throws {@link InvalidArgumentError} unless `id` is a valid topic id. */
export function assertTopicId(id: unknown): asserts id is string {
  if (typeof id !== "string" || !TOPIC_ID_PATTERN.test(id) || id.includes("..") || id.endsWith(".")) {
    throw new InvalidArgumentError(
      `invalid topic id ${JSON.stringify(id)}: use [a-z0-9][a-z0-9._-]* without empty segments or a trailing dot, at most 128 characters`,
    );
  }
}

/** Throws {@link InvalidArgumentError} unless `ns` is a valid namespace. */
export function assertNamespace(ns: unknown): asserts ns is string {
  if (typeof ns !== "string" || !NAMESPACE_PATTERN.test(ns)) {
    throw new InvalidArgumentError(`invalid namespace ${JSON.stringify(ns)}: use [a-z0-9][a-z0-9-]*, at most 32 characters`);
  }
}

/** Throws {@link InvalidArgumentError} unless `tenantId` is a non-empty string of at most 256 UTF-8 bytes. */
export function assertTenantId(tenantId: unknown): asserts tenantId is string {
  if (typeof tenantId !== "string" || tenantId.length === 0) {
    throw new InvalidArgumentError("tenantId must be a non-empty string");
  }
  if (LONE_SURROGATE.test(tenantId)) {
    throw new InvalidArgumentError("tenantId must be well-formed Unicode (no lone surrogates)");
  }
  if (utf8Length(tenantId) > MAX_TENANT_BYTES) {
    throw new InvalidArgumentError(`tenantId is longer than ${MAX_TENANT_BYTES} UTF-8 bytes`);
  }
}

/**
 * Encodes a tenant id as one subject token: plain ids (`[A-Za-z0-9-]`) stay readable, anything
 * else becomes `~` + base64url of its UTF-8 bytes. `undefined` is the no-tenant token `_`.
 */
export function encodeTenant(tenantId: string | undefined): string {
  if (tenantId === undefined) return NO_TENANT_TOKEN;
  assertTenantId(tenantId);
  return PLAIN_TENANT.test(tenantId) ? tenantId : "~" + toBase64Url(tenantId);
}

/** Decodes a token made by {@link encodeTenant}; throws for anything else. */
export function decodeTenant(token: string): string | undefined {
  if (token === NO_TENANT_TOKEN) return undefined;
  if (PLAIN_TENANT.test(token)) return token;
  if (token.startsWith("~")) {
    const text = fromBase64Url(token.slice(1));
    if (text !== undefined && text.length > 0 && !PLAIN_TENANT.test(text)) return text;
  }
  throw new InvalidArgumentError(`not a tenant token: ${JSON.stringify(token)}`);
}

/**
 * Encodes a topic id as one subject token and stream-name part: `.` becomes `~`, which topic
 * ids never contain (stream names and subject tokens cannot hold a dot).
 */
export function topicToken(topicId: string): string {
  return topicId.replace(/\./g, "~");
}

/** Inverse of {@link topicToken}. */
export function topicFromToken(token: string): string {
  return token.replace(/~/g, ".");
}
