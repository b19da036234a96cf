/** Compares what a real reader delivered and reported with the model's expectation. */
import type { TidemarkEvent } from "../../src/index.js";
import { describeExpectation, type Expectation, type ModelEvent } from "./model.js";
import type { Observed } from "./paths.js";

/** Undefined when they agree; else what was expected and what came. */
export function differs(expected: Expectation, observed: Observed, report: string): string | undefined {
  const want = expected.kind === "events" ? "none" : expected.kind;
  const wantEvents = expected.kind === "events" ? expected.events : [];
  const same = report === want && observed.events.length === wantEvents.length && wantEvents.every((m, i) => sameEvent(observed.events[i]!, m));
  if (same) return undefined;
  const got = observed.events.map((e) => e.streamSequence).join(",");
  const ids = observed.events.length ? ` ids ${observed.events.map((e) => e.eventId).join(",")}` : "";
  return `expected ${describeExpectation(expected)}, got ${report === "none" ? "" : report + " "}events [${got}]${ids}`;
}

/** The same event: id, cursor and sequence of the receipt, and the tenant it was published to. */
function sameEvent(e: TidemarkEvent, m: ModelEvent): boolean {
  return e.eventId === m.receipt.eventId && e.cursor === m.receipt.cursor && e.streamSequence === m.receipt.streamSequence && e.tenantId === m.tenant;
}
