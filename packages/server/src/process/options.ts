/**
 * process() options: validation, defaults, the retry schedule, and the delivery declaration a
 * durable consumer carries in its `description` (nats-server 2.9 has no consumer metadata), so
 * that a second declaration with other settings is refused with ResourceDriftError.
 */
import { InvalidArgumentError } from "@tidemark/shared";
import type { ProcessOptions } from "../core/types.js";

/** Consumer names: `[A-Za-z0-9_-]`, at most 64 characters. */
export const CONSUMER_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** Defaults of the optional process() settings. */
export const PROCESS_DEFAULTS = {
  concurrency: 1,
  /**
   * Ack wait of a consumer this worker creates: a dead worker's events are back after at most
   * this long. Held events are renewed every third of it, so it does not bound handler time.
   * Without `leaseMs` a worker adopts the lease of a consumer that exists.
   */
  leaseMs: 3_000,
} as const;

/** In-progress acks per lease: renewals every `leaseMs / 3`, so a stall of 2/3 of it is safe. */
export const LEASE_RENEWALS = 3;

const LIMITS = {
  maxAttempts: 10_000,
  backoffSteps: 100,
  backoffMs: 7 * 24 * 3600_000,
  concurrency: 1_024,
  leaseMinMs: 1_000,
  leaseMaxMs: 3600_000,
} as const;

/** What a consumer is declared with; two instances of one consumer must agree on all of it. */
export interface Declaration {
  /** `null` for the whole topic. */
  tenantId: string | null;
  /** `"earliest"`, `"latest"` or `"after:<sequence>"`. */
  start: string;
  maxAttempts: number;
  backoffMs: number[];
  leaseMs: number;
}

export type StartPosition = { kind: "earliest" } | { kind: "latest" } | { kind: "after"; sequence: number };

export interface ResolvedProcessOptions {
  consumer: string;
  tenantId: string | undefined;
  start: StartPosition;
  concurrency: number;
  /** Deadline of a stop() without one; undefined: none. */
  stopGraceMs: number | undefined;
  /** `delivery.leaseMs` was given: an existing consumer with another lease is drift, not adopted. */
  leaseDeclared: boolean;
  declaration: Declaration;
}

/** Throws {@link InvalidArgumentError} unless `name` is a valid consumer name. */
export function assertConsumerName(name: unknown): asserts name is string {
  if (typeof name !== "string" || !CONSUMER_NAME_PATTERN.test(name)) {
    throw new InvalidArgumentError(
      `invalid consumer ${JSON.stringify(name)}: use [A-Za-z0-9_-], 1 to 64 characters`,
    );
  }
}

/**
 * Validates once and applies defaults. `cursorSequence` translates `start: { after }` (and
 * throws InvalidCursorError / CursorMismatchError for a foreign cursor).
 */
export function resolveProcessOptions(
  options: ProcessOptions,
  cursorSequence: (cursor: string) => number,
): ResolvedProcessOptions {
  if (typeof options !== "object" || options === null) throw new InvalidArgumentError("process() needs options");
  assertConsumerName(options.consumer);
  const delivery = options.delivery as ProcessOptions["delivery"] | undefined;
  if (typeof delivery !== "object" || delivery === null) {
    throw new InvalidArgumentError("delivery must be { maxAttempts, backoffMs }");
  }
  const maxAttempts = integer("delivery.maxAttempts", delivery.maxAttempts, 1, LIMITS.maxAttempts);
  if (!Array.isArray(delivery.backoffMs) || delivery.backoffMs.length > LIMITS.backoffSteps) {
    throw new InvalidArgumentError(`delivery.backoffMs must be an array of at most ${LIMITS.backoffSteps} delays in ms`);
  }
  const backoffMs = delivery.backoffMs.map((ms, i) => integer(`delivery.backoffMs[${i}]`, ms, 0, LIMITS.backoffMs));
  const leaseMs = integer("delivery.leaseMs", delivery.leaseMs ?? PROCESS_DEFAULTS.leaseMs, LIMITS.leaseMinMs, LIMITS.leaseMaxMs);
  const concurrency = integer("concurrency", options.concurrency ?? PROCESS_DEFAULTS.concurrency, 1, LIMITS.concurrency);
  const stopGraceMs = options.stopGraceMs === undefined ? undefined : integer("stopGraceMs", options.stopGraceMs, 0, LIMITS.leaseMaxMs);
  if (options.tenantId !== undefined && (typeof options.tenantId !== "string" || options.tenantId === "")) {
    throw new InvalidArgumentError("tenantId must be a non-empty string");
  }
  const start = resolveStart(options.start, cursorSequence);
  return {
    consumer: options.consumer,
    tenantId: options.tenantId,
    start,
    concurrency,
    stopGraceMs,
    leaseDeclared: delivery.leaseMs !== undefined,
    declaration: {
      tenantId: options.tenantId ?? null,
      start: startText(start),
      maxAttempts,
      backoffMs,
      leaseMs,
    },
  };
}

function resolveStart(start: unknown, cursorSequence: (cursor: string) => number): StartPosition {
  if (start === "earliest" || start === "latest") return { kind: start };
  if (typeof start === "object" && start !== null && "after" in start) {
    const after = (start as { after: unknown }).after;
    if (typeof after !== "string") throw new InvalidArgumentError("start.after must be a cursor");
    return { kind: "after", sequence: cursorSequence(after) };
  }
  throw new InvalidArgumentError('start must be "earliest", "latest" or { after: cursor }');
}

function startText(start: StartPosition): string {
  return start.kind === "after" ? `after:${start.sequence}` : start.kind;
}

function integer(field: string, value: unknown, min: number, max: number): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidArgumentError(`${field} must be an integer from ${min} to ${max}, got ${String(value)}`);
  }
  return value;
}

/**
 * Delay before the attempt after `attempt` (1-based): `backoffMs[attempt - 1]`, the last value
 * repeating; 0 without a schedule.
 */
export function retryDelay(backoffMs: readonly number[], attempt: number): number {
  if (backoffMs.length === 0) return 0;
  return backoffMs[Math.min(Math.max(attempt, 1), backoffMs.length) - 1] ?? 0;
}

const DESCRIPTION_PREFIX = "tidemark process v1 ";

/** The consumer description that records a declaration. */
export function encodeDeclaration(declaration: Declaration): string {
  return DESCRIPTION_PREFIX + JSON.stringify(declaration);
}

/** Parses {@link encodeDeclaration}'s output; `undefined` for anything else. */
export function decodeDeclaration(description: string | undefined): Declaration | undefined {
  if (!description?.startsWith(DESCRIPTION_PREFIX)) return undefined;
  try {
    const d = JSON.parse(description.slice(DESCRIPTION_PREFIX.length)) as Declaration;
    if (typeof d !== "object" || d === null || typeof d.start !== "string" || !Array.isArray(d.backoffMs)) return undefined;
    return d;
  } catch {
    return undefined;
  }
}

/**
 * Public names of the fields in which `actual` differs from `expected`. Without `lease` the
 * lease is left out (it is adopted, or compared with the consumer's ack wait instead).
 */
export function declarationDrift(expected: Declaration, actual: Declaration | undefined, lease = true): string[] {
  if (!actual) return ["consumer"];
  const fields: string[] = [];
  if (expected.tenantId !== actual.tenantId) fields.push("tenantId");
  if (expected.start !== actual.start) fields.push("start");
  if (expected.maxAttempts !== actual.maxAttempts) fields.push("delivery.maxAttempts");
  if (JSON.stringify(expected.backoffMs) !== JSON.stringify(actual.backoffMs)) fields.push("delivery.backoffMs");
  if (lease && expected.leaseMs !== actual.leaseMs) fields.push("delivery.leaseMs");
  return fields;
}
