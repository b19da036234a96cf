import { describe, expect, it } from "vitest";
import { tabStatus, transition, type ConnEvent, type ConnState } from "./state.js";

const half = () => 0.5;
const run = (events: ConnEvent[], from: ConnState = { kind: "idle" }) => {
  let state = from;
  const actions: string[] = [];
  for (const e of events) {
    const t = transition(state, e, { baseMs: 100, maxMs: 1000 }, half);
    state = t.state;
    actions.push(t.action.type === "schedule" ? `schedule:${t.action.delayMs}` : t.action.type);
  }
  return { state, actions };
};

describe("state", () => {
  it("state - start connects, welcome opens", () => {
    const { state, actions } = run([{ type: "start" }, { type: "welcome", connectionId: "c1" }]);
    expect(state).toEqual({ kind: "open", attempt: 0, connectionId: "c1" });
    expect(actions).toEqual(["connect", "none"]);
  });

  it("state - failed connects back off exponentially with jitter", () => {
    const closed: ConnEvent = { type: "closed", reason: "refused" };
    const { state, actions } = run([{ type: "start" }, closed, { type: "retry" }, closed, { type: "retry" }, closed]);
    expect(actions).toEqual(["connect", "schedule:100", "connect", "schedule:200", "connect", "schedule:400"]);
    expect(state).toMatchObject({ kind: "waiting", attempt: 3 });
  });

  it("state - a connection that opened starts the backoff again", () => {
    const { actions } = run([
      { type: "start" },
      { type: "closed", reason: "x" },
      { type: "retry" },
      { type: "welcome", connectionId: "c" },
      { type: "closed", reason: "server gone" },
    ]);
    expect(actions.at(-1)).toBe("schedule:50");
  });

  it("state - drain adds the server's delay", () => {
    const { actions } = run([{ type: "start" }, { type: "welcome", connectionId: "c" }, { type: "closed", reason: "drain", retryAfterMs: 1000 }]);
    expect(actions.at(-1)).toBe("schedule:1050");
  });

  it("state - a drain before welcome is honoured: the server's delay plus full jitter under the capped step", () => {
    const backoff = { baseMs: 500, maxMs: 15_000 };
    const drained: ConnEvent = { type: "closed", reason: "server draining", retryAfterMs: 7_000 };
    const connecting: ConnState = { kind: "connecting", attempt: 2 };
    // Attempt 3: a step of 4 s; the jitter is uniform below it and never shortens the server's delay.
    const low = transition(connecting, drained, backoff, () => 0);
    expect(low).toEqual({ state: { kind: "waiting", attempt: 3, delayMs: 7_000, reason: "server draining", hinted: true }, action: { type: "schedule", delayMs: 7_000 } });
    expect(transition(connecting, drained, backoff, () => 0.999_999).action).toEqual({ type: "schedule", delayMs: 7_000 + 3_999 });
    // Long past the cap the jitter stays full (uniform below 15 s), not pinned at the cap: a crowd stays spread.
    expect(transition({ kind: "connecting", attempt: 30 }, drained, backoff, () => 0.5).action).toEqual({ type: "schedule", delayMs: 7_000 + 7_500 });
    // A page made visible does not cut a wait the server asked for; an unhinted long wait it does.
    expect(transition(low.state, { type: "visible" }).action.type).toBe("none");
    expect(transition(transition(connecting, { type: "closed", reason: "x" }, { baseMs: 5_000 }, () => 0.9).state, { type: "visible" }).action.type).toBe("connect");
  });

  it("state - offline disconnects and online reconnects at once", () => {
    const { state, actions } = run([{ type: "start" }, { type: "welcome", connectionId: "c" }, { type: "offline" }, { type: "closed", reason: "late close" }, { type: "online" }]);
    expect(actions).toEqual(["connect", "none", "disconnect", "none", "connect"]);
    expect(state).toEqual({ kind: "connecting", attempt: 0 });
  });

  it("state - online or visible cut a long wait short, stale retries are ignored", () => {
    const waiting: ConnState = { kind: "waiting", attempt: 6, delayMs: 5000, reason: "x" };
    expect(transition(waiting, { type: "visible" }).action.type).toBe("connect");
    expect(transition({ ...waiting, delayMs: 500 }, { type: "visible" }).action.type).toBe("none");
    expect(transition(waiting, { type: "online" }).state).toEqual({ kind: "connecting", attempt: 6 });
    expect(transition({ kind: "open", attempt: 0, connectionId: "c" }, { type: "retry" }).action.type).toBe("none");
  });

  it("state - stop from anywhere goes idle", () => {
    expect(run([{ type: "start" }, { type: "stop" }]).actions).toEqual(["connect", "disconnect"]);
    expect(run([{ type: "stop" }]).actions).toEqual(["none"]);
  });

  it("state - tab status follows socket and replay", () => {
    const open: ConnState = { kind: "open", attempt: 0, connectionId: "c" };
    expect(tabStatus({ kind: "connecting", attempt: 0 }, false, false)).toBe("connecting");
    expect(tabStatus(open, false, false)).toBe("connecting");
    expect(tabStatus(open, false, true)).toBe("live");
    expect(tabStatus(open, true, false)).toBe("resuming");
    expect(tabStatus({ kind: "connecting", attempt: 2 }, true, true)).toBe("resuming");
    expect(tabStatus({ kind: "waiting", attempt: 1, delayMs: 10, reason: "" }, true, true)).toBe("offline");
    expect(tabStatus({ kind: "offline" }, false, false)).toBe("offline");
  });
});

describe("state - failed", () => {
  const error = { code: "ORIGIN_REFUSED" as const, name: "OriginRefusedError", message: "origin not allowed" };

  it("state - a final refusal fails from connecting, open or waiting; offline, online, visible and retry leave it failed", () => {
    for (const from of [{ kind: "connecting", attempt: 2 }, { kind: "open", attempt: 0, connectionId: "c" }, { kind: "waiting", attempt: 1, delayMs: 50, reason: "x" }] as ConnState[]) {
      const { state, actions } = run([{ type: "failed", error }, { type: "offline" }, { type: "online" }, { type: "visible" }, { type: "retry" }], from);
      expect(state).toEqual({ kind: "failed", error });
      expect(actions).toEqual(["none", "none", "none", "none", "none"]);
    }
    expect(run([{ type: "failed", error }]).state).toEqual({ kind: "idle" });
  });

  it("state - start (a tab attaching) tries again from failed; stop goes idle", () => {
    expect(run([{ type: "start" }], { kind: "failed", error })).toEqual({ state: { kind: "connecting", attempt: 0 }, actions: ["connect"] });
    expect(run([{ type: "stop" }], { kind: "failed", error }).state).toEqual({ kind: "idle" });
  });

  it("state - a failed socket shows `failed` in every tab", () => {
    expect(tabStatus({ kind: "failed", error }, true, true)).toBe("failed");
    expect(tabStatus({ kind: "failed", error }, false, false)).toBe("failed");
  });
});
