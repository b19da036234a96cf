import { describe, expect, it } from "vitest";
import { CloseCode, ErrorCode } from "@tidemark/shared";
import { Outbound, type OutboundHost } from "./outbound.js";
import { Session, type SessionHost } from "./session.js";
import { resolveOptions, type BridgeOptions } from "./options.js";
import { BridgeMetrics } from "./metrics.js";
import { BackpressurePoller } from "./backpressure.js";
import { PrincipalCounts } from "./principal-counts.js";
import { UnauthenticatedCount } from "./unauthenticated.js";
import { StallClock } from "./stall.js";
import type { BridgeSocket } from "./socket.js";

interface User {
  id: string;
  expiresAt?: number;
}

/**
 * A Session whose host (the Connection's part) sends through a real Outbound over a recording
 * socket and records what else the session asks of it: closes, ended subscriptions,
 * reauthorizations.
 */
/** Never called: a Session does not upgrade sockets. */
const upgradeWebSocket = (() => {
  throw new Error("no upgrade in a unit test");
}) as unknown as BridgeOptions<User>["upgradeWebSocket"];

function session(users: Record<string, User>) {
  const options = resolveOptions<User>({ topics: [], upgradeWebSocket, authenticate: (token) => users[token], logger: () => {} });
  const context = {
    options,
    metrics: new BridgeMetrics(),
    backpressure: new BackpressurePoller(),
    principals: new PrincipalCounts(options.limits.maxConnectionsPerPrincipal),
    unauthenticated: new UnauthenticatedCount(options.limits),
    clock: new StallClock(),
    log: options.log,
    warnOnce: () => {},
  };
  const sent: unknown[] = [];
  const socket: BridgeSocket = { send: (t) => sent.push(JSON.parse(t)), sendFrame: () => {}, close: () => {}, bufferedAmount: 0 };
  const calls: string[] = [];
  const host: OutboundHost & SessionHost = {
    id: "c-test",
    get closed() {
      return s.state === "closed";
    },
    close(code, reason) {
      calls.push(`close ${code} ${reason}`);
      s.end();
    },
    endAll(code, message) {
      calls.push(`endAll ${code} ${message}`);
    },
    async reauthorize() {
      calls.push("reauthorize");
    },
    send: (text) => out.send(text),
    refuse: (...args) => out.refuse(...args),
    protocolError: (err) => out.protocolError(err),
  };
  const out = new Outbound(context, socket, host);
  const place = context.unauthenticated.add("127.0.0.1", { shed: () => {} })!;
  const s = new Session<User>(context, host, new Request("http://127.0.0.1/ws"), undefined, place);
  return { s, sent, calls, context };
}

describe("session - the authentication half of a connection, owned by it", () => {
  it("session - hello with a known token opens the session, leaves the unauthenticated count and sends welcome with the host's id", async () => {
    const { s, sent, context } = session({ t1: { id: "u1" } });
    expect(context.unauthenticated.size).toBe(1);
    await s.hello({ type: "hello", v: 1, token: "t1" });
    expect(s.state).toBe("open");
    expect(s.principal).toEqual({ id: "u1" });
    expect(s.principalKey).toBe("u1");
    expect(context.unauthenticated.size).toBe(0);
    expect(sent).toEqual([expect.objectContaining({ type: "welcome", connectionId: "c-test" })]);
  });

  it("session - hello with a refused token sends UNAUTHORIZED and closes the connection 4401 through its host", async () => {
    const { s, sent, calls, context } = session({});
    await s.hello({ type: "hello", v: 1, token: "nope" });
    expect(sent).toEqual([expect.objectContaining({ type: "error", code: ErrorCode.Unauthorized })]);
    expect(calls).toEqual([`close ${CloseCode.Unauthorized} authentication failed`]);
    expect(s.state).toBe("closed");
    expect(context.unauthenticated.size).toBe(0);
  });

  it("session - a token past its expiry ends every subscription through the host, bumps the auth epoch, and waits for refresh", async () => {
    const { s, calls } = session({ t1: { id: "u1", expiresAt: 5_000 } });
    await s.hello({ type: "hello", v: 1, token: "t1" });
    const epoch = s.authEpoch;
    s.checkDeadlines(5_000);
    expect(calls).toEqual([`endAll ${ErrorCode.Unauthorized} the token expired`]);
    expect(s.state).toBe("expired");
    expect(s.authEpoch).toBeGreaterThan(epoch);
  });

  it("session - a refresh to another principal moves the per-principal slot and asks the host to reauthorize", async () => {
    const { s, sent, calls } = session({ t1: { id: "u1" }, t2: { id: "u2" } });
    await s.hello({ type: "hello", v: 1, token: "t1" });
    await s.refresh({ type: "refresh", token: "t2" });
    expect(s.principalKey).toBe("u2");
    expect(calls).toEqual(["reauthorize"]);
    expect(sent.at(-1)).toMatchObject({ type: "refreshed" });
  });
});
