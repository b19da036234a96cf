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

/**
 * The open containers of the walks in progress, reused so that checking accepted data allocates
 * nothing; a walk uses the entries from its own start (a getter may publish in the middle of one).
 */
const open: object[] = [];

/** Throws {@link InvalidArgumentError} naming the path of the first value that would not read back as passed. */
export function assertJsonValue(value: unknown, path = "data"): void {
  // Checked first without building paths or a Set (a publish's data is nearly always fine);
  // only refused data is walked again to name the path of the first offending value.
  if (typeof value !== "object" || value === null) {
    if (acceptedLeaf(value)) return;
  } else {
    const base = open.length;
    let ok: boolean;
    try {
      ok = accepted(value, base);
    } finally {
      open.length = base;
    }
    if (ok) return;
  }
  check(value, path, new Set());
}

function acceptedLeaf(value: unknown): boolean {
  const type = typeof value;
  if (type === "number") return Number.isFinite(value);
  return type === "string" || type === "boolean" || value === null;
}

/** The rules of `check`, without paths: `open` from `base` is the stack of open containers. */
function accepted(value: unknown, base: number): boolean {
  if (typeof value !== "object" || value === null) return acceptedLeaf(value);
  const obj = value;
  if (open.indexOf(obj, base) !== -1) return false;
  open.push(obj);
  if (Array.isArray(obj)) {
    if (Object.getPrototypeOf(obj) !== Array.prototype) return false;
    for (let i = 0; i < obj.length; i++) if (!(i in obj) || !accepted(obj[i], base)) return false;
  } else {
    const proto = Object.getPrototypeOf(obj) as unknown;
    if (proto !== Object.prototype && proto !== null) return false;
    if (Object.getOwnPropertySymbols(obj).length > 0) return false;
    for (const key in obj) {
      // for-in also walks inherited enumerable keys: only a null-prototype or plain object gets
      // here, and Object.prototype has none unless someone added one (then: own keys only).
      if (!Object.hasOwn(obj, key)) continue;
      const v = (obj as Record<string, unknown>)[key];
      if (v !== undefined && !accepted(v, base)) return false;
    }
  }
  open.pop();
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
