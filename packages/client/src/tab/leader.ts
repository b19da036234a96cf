/**
 * The fallback where SharedWorker is missing: tabs elect a leader with Web Locks; the leader
 * runs the engine in its page and serves the other tabs over a BroadcastChannel. When the
 * leader goes away the lock passes to the next tab, which announces itself; followers attach
 * to it again (history survives in IndexedDB).
 */
import { fromErrorPayload, toErrorPayload, type ErrorPayload } from "@tidemark/shared";
import { callEngine, forwardCalls, type EngineCall } from "../engine-calls.js";
import { Engine } from "../engine.js";
import { packer, unpacker, type Packet } from "../tab-wire.js";
import type { EngineApi, TabMessage } from "../types.js";

/** @internal Messages on the channel. */
export type ChannelMessage =
  | { t: "leader"; leader: string }
  | { t: "who" }
  | { t: "attach"; to: string; from: string; id: number; args: Parameters<EngineApi["attach"]>[0 | 1][] }
  | { t: "call"; to: string; from: string; id: number; method: EngineCall; args: unknown[] }
  | { t: "reply"; to: string; id: number; ok: true; value: unknown }
  | { t: "reply"; to: string; id: number; ok: false; error: ErrorPayload }
  /** Every follower receives every push: items travel as JSON strings (tab-wire.ts). */
  | { t: "push"; to: string; packet: Packet };

const CALL_TIMEOUT_MS = 5_000;

/** @internal */
export interface LeaderElection {
  /** Called with the engine to use now: the local one (leader) or a remote one (follower). */
  onEngine(engine: EngineApi, role: "leader" | "follower"): void;
  /** Pushes from the leader to this tab (follower side). */
  onPush(message: TabMessage): void;
}

/** @internal Joins the election; returns a function that leaves it. */
export function joinElection(name: string, tabId: string, election: LeaderElection): { leave(): void; local(): Engine | undefined } {
  const channel = new BroadcastChannel(name);
  let engine: Engine | undefined;
  let leader: string | undefined;
  let nextId = 0;
  const pending = new Map<number, { resolve(v: unknown): void; reject(e: unknown): void }>();
  const post = (m: ChannelMessage) => channel.postMessage(m);
  const receive = unpacker((message) => election.onPush(message));
  let releaseLock: (() => void) | undefined;

  const remote = (leaderId: string): EngineApi => {
    const call = (method: EngineCall | "attach", args: unknown[]) =>
      new Promise<unknown>((resolve, reject) => {
        const id = ++nextId;
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(new Error(`leader did not answer ${method}`));
        }, CALL_TIMEOUT_MS);
        pending.set(id, {
          resolve: (v) => (clearTimeout(timer), resolve(v)),
          reject: (e) => (clearTimeout(timer), reject(e)),
        });
        if (method === "attach") post({ t: "attach", to: leaderId, from: tabId, id, args: args as never });
        else post({ t: "call", to: leaderId, from: tabId, id, method, args });
      });
    return {
      ...forwardCalls(call),
      // The follower's getToken stays home: the leader asks its own page.
      attach: (tab, config) => call("attach", [tab, config]) as Promise<void>,
    };
  };

  channel.onmessage = (event: MessageEvent<ChannelMessage>) => {
    const m = event.data;
    switch (m.t) {
      case "leader":
        if (m.leader !== tabId && m.leader !== leader && !engine) {
          leader = m.leader;
          election.onEngine(remote(m.leader), "follower");
        }
        return;
      case "who":
        if (engine) post({ t: "leader", leader: tabId });
        return;
      case "attach":
      case "call": {
        if (m.to !== tabId || !engine) return;
        const from = m.from;
        const run =
          m.t === "attach"
            ? engine.attach(m.args[0] as never, m.args[1] as never, packer((packet) => post({ t: "push", to: from, packet })))
            : callEngine(engine, m.method, m.args);
        run.then(
          (value) => post({ t: "reply", to: from, id: m.id, ok: true, value }),
          (err) => post({ t: "reply", to: from, id: m.id, ok: false, error: toErrorPayload(err) }),
        );
        return;
      }
      case "reply": {
        if (m.to !== tabId) return;
        const p = pending.get(m.id);
        pending.delete(m.id);
        if (!p) return;
        if (m.ok) p.resolve(m.value);
        else p.reject(fromErrorPayload(m.error));
        return;
      }
      case "push":
        if (m.to === tabId && !engine) receive(m.packet);
        return;
    }
  };

  void navigator.locks.request(`${name}:leader`, () => {
    engine = new Engine();
    leader = tabId;
    election.onEngine(engine, "leader");
    post({ t: "leader", leader: tabId });
    // Hold the lock for the life of the page.
    return new Promise<void>((resolve) => (releaseLock = resolve));
  });
  post({ t: "who" });

  return {
    leave() {
      void engine?.shutdown();
      releaseLock?.();
      channel.close();
    },
    local: () => engine,
  };
}
