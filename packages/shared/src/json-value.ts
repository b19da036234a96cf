/**
 * The payload rule: event data must read back exactly as it was passed. JSON.stringify silently
 * drops or rewrites many values (a Map becomes `{}`, `[undefined]` becomes `[null]`, a Date a
 * string, a bigint throws), so data is checked before it is stored, and anything that would not
 * round-trip is refused with the path of the first offending value.
 *
 * Accepted: null, booleans, strings, finite numbers, arrays (dense, of accepted values) and plain
 * objects (prototype `Object.prototype` or null, string keys, accepted values).
 * Changed, the only exception: an object member whose value is `undefined` is omitted (reading
 * it back still gives `undefined`); `-0` is stored as `0`.
 */
import { InvalidArgumentError } from "./errors.js";

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

function member(path: string, key: string): string {
  return IDENT.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

function refuse(path: string, what: string): never {
  throw new InvalidArgumentError(`${path} is ${what}; event data must be JSON that reads back as it was passed`);
}

function kindOf(value: object): string {
  const name = (Object.getPrototypeOf(value) as { constructor?: { name?: unknown } } | null)?.constructor?.name;
  return typeof name === "string" && name !== "" ? `a ${name}` : "an object that is not a plain object";
}

/** Throws {@link InvalidArgumentError} naming the path of the first value that would not read back as passed. */
export function assertJsonValue(value: unknown, path = "data"): void {
  // Checked first without building paths or a Set (a publish's data is nearly always fine);
  // only refused data is walked again to name the path of the first offending value.
  if (accepted(value, [])) return;
  check(value, path, new Set());
}

/** The rules of `check`, without paths: `ancestors` is the stack of open containers. */
function accepted(value: unknown, ancestors: object[]): boolean {
  const type = typeof value;
  if (type === "string" || type === "boolean" || value === null) return true;
  if (type === "number") return Number.isFinite(value);
  if (type !== "object") return false;
  const obj = value as object;
  if (ancestors.includes(obj)) return false;
  ancestors.push(obj);
  if (Array.isArray(obj)) {
    if (Object.getPrototypeOf(obj) !== Array.prototype) return false;
    for (let i = 0; i < obj.length; i++) if (!(i in obj) || !accepted(obj[i], ancestors)) return false;
  } else {
    const proto = Object.getPrototypeOf(obj) as unknown;
    if (proto !== Object.prototype && proto !== null) return false;
    if (Object.getOwnPropertySymbols(obj).length > 0) return false;
    for (const key of Object.keys(obj)) {
      const v = (obj as Record<string, unknown>)[key];
      if (v !== undefined && !accepted(v, ancestors)) return false;
    }
  }
  ancestors.pop();
  return true;
}

function check(value: unknown, path: string, ancestors: Set<object>): void {
  const type = typeof value;
  if (type === "string" || type === "boolean" || value === null) return;
  if (type === "number") {
    if (!Number.isFinite(value)) refuse(path, `a non-finite number (${String(value)})`);
    return;
  }
  if (type !== "object") refuse(path, type === "undefined" ? "undefined" : `a ${type}`);
  const obj = value as object;
  if (ancestors.has(obj)) refuse(path, "a cycle (a value that contains itself)");
  ancestors.add(obj);
  if (Array.isArray(obj)) {
    if (Object.getPrototypeOf(obj) !== Array.prototype) refuse(path, kindOf(obj));
    for (let i = 0; i < obj.length; i++) {
      if (!(i in obj)) refuse(`${path}[${i}]`, "a hole (a sparse array reads back with null)");
      check(obj[i], `${path}[${i}]`, ancestors);
    }
  } else {
    const proto = Object.getPrototypeOf(obj) as unknown;
    if (proto !== Object.prototype && proto !== null) refuse(path, kindOf(obj));
    if (Object.getOwnPropertySymbols(obj).length > 0) {
      throw new InvalidArgumentError(`${path} has a symbol key; event data must be JSON that reads back as it was passed`);
    }
    for (const key of Object.keys(obj)) {
      const v = (obj as Record<string, unknown>)[key];
      if (v !== undefined) check(v, member(path, key), ancestors);
    }
  }
  ancestors.delete(obj);
}
