/** Runtime-neutral base64url (no `Buffer`): used by cursors and tenant tokens. */

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/** @internal Encodes UTF-8 text as unpadded base64url. */
export function toBase64Url(text: string): string {
  const bytes = encoder.encode(text);
  let binary = "";
  for (let i = 0; i < bytes.length; i++) binary += String.fromCharCode(bytes[i]!);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** @internal Decodes unpadded base64url into UTF-8 text; `undefined` when it is not valid. */
export function fromBase64Url(value: string): string | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(value) || value.length % 4 === 1) return undefined;
  try {
    const binary = atob(value.replace(/-/g, "+").replace(/_/g, "/"));
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    const text = decoder.decode(bytes);
    // Reject non-canonical encodings so that one value has exactly one text form.
    return toBase64Url(text) === value ? text : undefined;
  } catch {
    return undefined;
  }
}

/** @internal UTF-8 byte length of a string. */
export function utf8Length(text: string): number {
  return encoder.encode(text).length;
}
