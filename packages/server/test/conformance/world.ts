/**
 * One model run: the model, the real system, and the readers (each a tenant, a saved position
 * and maybe a held subscription). Each command does the same thing to both sides and checks
 * what the real readers delivered against what the model predicts.
 */
import type { TidemarkEvent } from "../../src/index.js";
import { CursorModel, sees, type Expectation, type Position } from "./model.js";
import { differs } from "./verdict.js";
import { HeldReader, reportOf, resume, WAIT_MS, type HeldPath, type Observed, type Path } from "./paths.js";
import { sleep } from "./pump.js";
import { FEED_PER_TOPIC, PRESSURE_PACE_MS, READER_TOKEN, type Payload, type System } from "./system.js";
import { TestClient } from "../bridge/client.js";

/** How long an idle held bridge subscription may take to get a fresh `caught_up`. */
export const WATERMARK_WAIT_MS = 8_000;

/** startSeq: events after it (of incarnation k) must reach the reader, each once, in order;
 * startReport: what it reported when it started (a bridge reset stays in its log). */
interface Held { reader: HeldReader; k: number; startSeq: number; startReport: string }

/** Strings a corrupted store could hand back as a saved cursor: each is answered, never fatal. */
export const NOT_CURSORS = ["", "garbage", `s6t.${"x".repeat(1_100)}`, "s6t.W10.1"];

export interface Reader {
  /** Undefined: a reader of the whole topic. */
  tenant: string | undefined;
  saved: Position;
  held?: Held;
}

export class World {
  readonly model = new CursorModel();
  readonly readers: Record<string, Reader> = {};
  #n = 0;

  constructor(readonly system: System) {}

  /** Provisions the topic, starts the bridge, and lets every reader save a first watermark. */
  async init(tenants: Record<string, string | undefined>): Promise<void> {
    await this.system.topic.head();
    await this.system.startBridge();
    await this.settle();
    for (const [name, tenant] of Object.entries(tenants)) {
      this.readers[name] = { tenant, saved: await this.watermark(tenant) };
    }
  }

  async publish(tenant: string | undefined, key: string | undefined, pad = 0): Promise<void> {
    await this.#publishOne(tenant, key, pad);
    await this.settle();
  }

  /** Another tenant pushes the byte window forward: paced while subscriptions are held. */
  async pressure(tenant: string | undefined, count: number, paced = Object.values(this.readers).some((r) => r.held)): Promise<void> {
    for (let i = 0; i < count; i++) {
      await this.#publishOne(tenant, undefined, 700);
      if (paced) await sleep(PRESSURE_PACE_MS);
    }
    await this.settle();
  }

  /**
   * Destroys the topic (here or in another process) and re-creates it. Held subscriptions are
   * released first, or (`keepHeld`) kept: then one event of each held reader's tenant is
   * published in the new incarnation, and each held subscription must report the mismatch
   * (`CursorMismatchError`; on the bridge `reset cursor_mismatch`, going on from its head)
   * without delivering a new-incarnation event as if it followed the old one.
   */
  async recreate(by: "self" | "other", keepHeld = false): Promise<void> {
    const held = Object.keys(this.readers).filter((n) => this.readers[n]!.held);
    const resetsBefore = new Map(held.map((n) => [n, this.readers[n]!.held!.reader.resets()]));
    if (!keepHeld) for (const name of held) await this.release(name);
    const topic = by === "self" ? this.system.topic : this.system.otherTopic;
    if (by === "other") await topic.head(); // the other process uses the topic first
    await topic.destroy();
    await topic.head();
    // This process notices a re-creation elsewhere at its next read (docs/core.md): until then a
    // receipt of its publish names the old incarnation, so it reads the head first.
    if (by === "other") await this.system.topic.head();
    this.model.recreated();
    if (!keepHeld) return this.settle();
    for (const tenant of new Set(held.map((n) => this.readers[n]!.tenant))) await this.#publishOne(tenant, undefined, 0);
    for (const name of held) await this.#crossed(name, resetsBefore.get(name) ?? 0);
    await this.settle();
  }

  /** A held subscription after its topic was re-created under it. */
  async #crossed(name: string, resetsBefore: number): Promise<void> {
    const reader = this.readers[name]!;
    const held = reader.held!;
    const end = Date.now() + WAIT_MS;
    // A bridge subscription held since a mismatch already reports one: wait for a newer reset.
    const crossed = () => held.reader.observed().report === "mismatch" && held.reader.resets() > resetsBefore;
    while (!crossed() && Date.now() < end) await sleep(20);
    const observed = held.reader.observed();
    const before = held.reader.eventsBeforeReset();
    const old = this.#heldEvents(reader, held);
    const label = `held ${held.reader.path} subscription of ${name} across a re-creation`;
    this.check(label, { kind: "events", events: old }, { events: before, report: observed.report }, crossed() ? "none" : `no new mismatch within ${WAIT_MS} ms (${observed.report})`);
    if (held.reader.path === "hub") {
      await held.reader.close();
      reader.held = undefined;
      reader.saved = await this.watermark(reader.tenant);
      return;
    }
    const head = this.system.topic.cursorSequence(observed.resetHead!);
    if (head > this.model.last) this.fail(`${label}: reset head #${head} is past the head #${this.model.last}`);
    reader.held = { reader: held.reader, k: this.model.k, startSeq: head, startReport: "mismatch" };
  }

  #heldEvents(reader: Reader, held: Held) {
    return this.model.events.filter((e) => e.k === held.k && sees(reader.tenant, e) && e.seq > held.startSeq);
  }

  /** The seed's watermark (head first, then the tenant's latest), or the tenant's latest alone. */
  async save(name: string, how: "watermark" | "latest" | number): Promise<void> {
    const reader = this.readers[name]!;
    if (typeof how === "number") reader.saved = { cursor: NOT_CURSORS[how % NOT_CURSORS.length]!, k: -1, seq: -1 };
    else if (how === "watermark") reader.saved = await this.watermark(reader.tenant);
    else {
      const latest = await this.#latest(reader.tenant);
      if (latest) reader.saved = this.position(latest);
    }
  }

  /**
   * A cursor of this incarnation minted past the head (`cursorAt()`): the highest sequence a
   * cursor can carry, which stays past the head, or the next sequence, which the next publish
   * makes an ordinary position. Every path must refuse it while it is past the head.
   */
  savePastHead(name: string, how: "max" | "next"): Promise<void> {
    const seq = how === "max" ? Number.MAX_SAFE_INTEGER : this.model.last + 1;
    this.readers[name]!.saved = { cursor: this.system.topic.cursorAt(seq), k: this.model.k, seq };
    return Promise.resolve();
  }

  async resume(name: string, path: Path): Promise<void> {
    const reader = this.readers[name]!;
    const [strict, known] = this.#expect(reader, path);
    const observed = await resume(this.system, path, reader.tenant, reader.saved.cursor, known ?? strict);
    const expected = known && observed.report === "none" ? known : strict;
    this.check(`${path} resume of ${name} from ${this.show(reader.saved)}`, expected, observed, observed.report);
    await this.#advance(reader, path, expected, observed);
  }

  /**
   * The model's expectation, and for the hub and bridge paths an alternative: a hub of the
   * tenant that has run in this process (a held subscription) since at or before the position
   * knows every event of the tenant after it, even those retention removed since. In hub mode
   * "topic" so may the topic's feed, kept running by a held subscription of any tenant since at
   * or before the position: its backlog holds every tenant's events it read, and the catch-up
   * read of that subscription's start is put in front of it. It may then resume without the gap,
   * but only with exactly those events.
   */
  #expect(reader: Reader, path: Path): [Expectation, Expectation | undefined] {
    const from = reader.saved;
    const strict = this.model.expect(from, reader.tenant);
    const knows = Object.values(this.readers).some(
      (r) =>
        r.held &&
        r.held.k === from.k &&
        (r.tenant === reader.tenant || FEED_PER_TOPIC) &&
        r.held.startSeq <= from.seq,
    );
    if (strict.kind !== "gap" || (path !== "hub" && path !== "bridge") || !knows) return [strict, undefined];
    return [strict, { kind: "events", events: this.model.tenantEventsAfter(reader.tenant, from.seq) }];
  }

  /** `replay({ after, until })` with `until` the other reader's position (or the head). */
  async replayUntil(name: string, untilOf: string): Promise<void> {
    const reader = this.readers[name]!;
    const other = this.readers[untilOf]!.saved;
    const until = other.k === this.model.k ? other : this.position(await this.system.topic.head());
    const expected = this.model.expect(reader.saved, reader.tenant, until.seq);
    const events: TidemarkEvent<Payload>[] = [];
    let report = "none";
    try {
      for await (const e of this.system.topic.replay({ after: reader.saved.cursor, until: until.cursor, tenantId: reader.tenant })) events.push(e);
    } catch (err) {
      report = reportOf(err as Error);
    }
    this.check(`replay of ${name} from ${this.show(reader.saved)} until ${this.show(until)}`, expected, { events, report }, report);
  }

  /** `live()` subscribes when it is called: an event published before the first read arrives. */
  async liveProbe(tenant: string | undefined): Promise<void> {
    const controller = new AbortController();
    const iterator = this.system.topic.live({ tenantId: tenant, signal: controller.signal })[Symbol.asyncIterator]();
    try {
      await this.#publishOne(tenant, undefined, 0);
      const want = this.model.current().at(-1)!.receipt;
      const got = await Promise.race([iterator.next().catch((err: Error) => err), sleep(WAIT_MS).then(() => "nothing")]);
      const event = typeof got === "object" && !(got instanceof Error) ? got.value : undefined;
      if (event?.eventId !== want.eventId) {
        this.fail(`live(${tenant ?? "-"}) called before a publish: expected #${want.streamSequence} first, got ${event ? `#${event.streamSequence}` : String(got)}`);
      }
    } finally {
      controller.abort();
      await iterator.return?.();
    }
    await this.settle();
  }

  async hold(name: string, path: HeldPath): Promise<void> {
    const reader = this.readers[name]!;
    const [strict, known] = this.#expect(reader, path);
    const held = await HeldReader.open(this.system, path, reader.tenant, reader.saved.cursor);
    const wait = known ?? strict;
    await held.settle(wait.kind === "events" ? wait.events.length : 0, "none", wait.kind !== "events");
    const observed = held.observed();
    const expected = known && observed.report === "none" ? known : strict;
    this.check(`held ${path} subscription of ${name} from ${this.show(reader.saved)}`, expected, observed, observed.report);
    if (path === "hub" && expected.kind !== "events") {
      await held.close();
      reader.saved = await this.watermark(reader.tenant);
      return;
    }
    const startSeq = observed.resetHead ? this.#checkHead(observed.resetHead, "reset head") : reader.saved.seq;
    reader.held = { reader: held, k: this.model.k, startSeq, startReport: observed.report };
  }

  /**
   * Closes a held subscription and saves its newest position. An idle bridge subscription must
   * have been given a watermark the window has not overtaken (DESIGN §3: fresh `caught_up` before
   * retention reaches the cursor).
   */
  async release(name: string): Promise<void> {
    const reader = this.readers[name]!;
    const held = reader.held!;
    await this.#checkHeld(name, held);
    const fresh = () => {
      const p = held.reader.position();
      return p !== undefined && this.model.resumable(this.system.topic.cursorSequence(p));
    };
    if (held.reader.path === "bridge") {
      const end = Date.now() + WATERMARK_WAIT_MS;
      while (!fresh() && Date.now() < end) await sleep(50);
      const p = held.reader.position();
      if (!fresh()) {
        this.fail(`idle bridge subscription of ${name}: newest watermark ${p && this.system.topic.cursorSequence(p)} is behind the window ${JSON.stringify(this.model.window)} after ${WATERMARK_WAIT_MS} ms`);
      }
      const seq = this.system.topic.cursorSequence(p!);
      if (seq > this.model.last) this.fail(`watermark ${seq} of ${name} is past the head ${this.model.last}`);
    }
    const p = held.reader.position();
    await held.reader.close();
    reader.held = undefined;
    if (p !== undefined) reader.saved = { cursor: p, k: held.k, seq: this.system.topic.cursorSequence(p) };
  }

  /** Restarts the bridge: each held bridge subscription resumes from its newest position. */
  async restartBridge(): Promise<void> {
    const moved = Object.keys(this.readers).filter((n) => this.readers[n]!.held?.reader.path === "bridge");
    for (const name of moved) await this.release(name);
    await this.system.stopBridge();
    await this.system.startBridge();
    for (const name of moved) await this.hold(name, "bridge");
  }

  /**
   * A crowd of bridge connections subscribes to a tenant's hub (half from the head, half
   * live-only) and drops every socket together `dropAfterMs` later, while the hub is starting
   * (issue 24, item 8). Once they are gone, and still a second later, the process holds no more
   * hub followers and read consumers than the held readers need: one follower per held tenant,
   * and one feed per topic (hub mode "topic") or a consumer per follower ("tenant").
   */
  async crowd(tenant: string | undefined, sockets: number, dropAfterMs: number): Promise<void> {
    const clients = await Promise.all(Array.from({ length: sockets }, () => TestClient.connect(this.system.wsUrl, READER_TOKEN)));
    const head = await this.system.topic.head();
    clients.forEach((c, i) => c.send({ type: "subscribe", id: "crowd", mode: "hub", topic: this.system.id, tenantId: tenant, ...(i % 2 ? { cursor: head } : {}) }));
    await sleep(dropAfterMs);
    for (const c of clients) c.ws.terminate();
    await Promise.all(clients.map((c) => c.closed));
    const tenants = new Set(Object.values(this.readers).filter((r) => r.held).map((r) => r.tenant));
    const need = { followers: tenants.size, consumers: FEED_PER_TOPIC ? Math.min(tenants.size, 1) : tenants.size };
    const excess = () => {
      const now = this.system.reads();
      return now.followers > need.followers || now.consumers > need.consumers ? now : undefined;
    };
    // A hub still starting (its head read, the feed's consumer) shows up after the sockets closed.
    const end = Date.now() + WAIT_MS;
    for (let clear = 0; clear < 20 && Date.now() < end; await sleep(50)) clear = excess() ? 0 : clear + 1;
    const left = excess();
    if (left) this.fail(`a crowd of ${sockets} on ${tenant ?? "-"} dropped after ${dropAfterMs} ms left ${JSON.stringify(left)}; the held readers need ${JSON.stringify(need)}`);
    await this.settle();
  }

  async idle(ms: number): Promise<void> {
    await sleep(ms);
    await this.settle();
  }

  /** Reads the window after a command and checks every held reader. */
  async settle(): Promise<void> {
    const window = await this.system.window();
    if (!window) this.fail("the topic does not exist on the broker");
    if (window.last !== this.model.last) this.fail(`the stream's last sequence is ${window.last}, the model's ${this.model.last}`);
    this.model.window = window;
    for (const [name, reader] of Object.entries(this.readers)) if (reader.held) await this.#checkHeld(name, reader.held);
  }

  async dispose(): Promise<void> {
    for (const reader of Object.values(this.readers)) await reader.held?.reader.close();
    await this.system.dispose();
  }

  position(cursor: string): Position {
    return { cursor, k: this.model.k, seq: this.system.topic.cursorSequence(cursor) };
  }

  /** Compares what a reader saw with the model; throws with both on a difference. */
  check(label: string, expected: Expectation, observed: Observed, report: string): void {
    const difference = differs(expected, observed, report);
    if (difference) this.fail(`${label}: ${difference}`);
  }

  fail(message: string): never {
    const m = this.model;
    throw new Error(`${message}\n  model: incarnation ${m.k}, window ${JSON.stringify(m.window)}, events ${m.current().map((e) => `${e.seq}:${e.tenant ?? "-"}`).join(" ")}`);
  }

  show(p: Position): string {
    if (p.k < 0) return `not-a-cursor ${JSON.stringify(p.cursor.slice(0, 12))}`;
    return `#${p.seq}${p.k === this.model.k ? "" : ` of incarnation ${p.k}`}`;
  }

  async #publishOne(tenant: string | undefined, key: string | undefined, pad: number): Promise<void> {
    const original = this.model.duplicateOf(tenant, key);
    const receipt = await this.system.topic.publish({ data: { n: ++this.#n, pad: pad ? "x".repeat(pad) : undefined }, tenantId: tenant, idempotencyKey: key });
    const label = `publish(${tenant ?? "-"}, key ${key ?? "-"})`;
    if (original) {
      const o = original.receipt;
      if (!receipt.duplicate || receipt.eventId !== o.eventId || receipt.cursor !== o.cursor || receipt.streamSequence !== o.streamSequence) {
        this.fail(`${label}: expected a duplicate of #${o.streamSequence}, got ${JSON.stringify({ ...receipt, cursor: undefined })}`);
      }
      return;
    }
    if (receipt.duplicate || receipt.streamSequence !== this.model.last + 1) {
      this.fail(`${label}: expected a new event #${this.model.last + 1}, got ${receipt.duplicate ? "a duplicate of " : ""}#${receipt.streamSequence}`);
    }
    this.model.stored(tenant, key, receipt);
  }

  async watermark(tenant: string | undefined): Promise<Position> {
    const head = await this.system.topic.head();
    this.#checkHead(head, "head()");
    const latest = await this.#latest(tenant);
    const seq = (c: string) => this.system.topic.cursorSequence(c);
    return this.position(latest && seq(latest) > seq(head) ? latest : head);
  }

  async #latest(tenant: string | undefined): Promise<string | undefined> {
    const latest = await this.system.topic.latestCursor({ tenantId: tenant });
    const want = this.model.latestRetained(tenant);
    if ((latest ?? "") !== (want?.receipt.cursor ?? "")) {
      this.fail(`latestCursor(${tenant ?? "-"}): expected ${want ? `#${want.seq}` : "undefined"}, got ${latest === undefined ? "undefined" : `#${this.system.topic.cursorSequence(latest)} (${latest})`}`);
    }
    return latest;
  }

  #checkHead(cursor: string, what: string): number {
    const seq = this.system.topic.cursorSequence(cursor);
    if (seq !== this.model.last) this.fail(`${what}: expected #${this.model.last}, got #${seq}`);
    return seq;
  }

  async #checkHeld(name: string, held: Held): Promise<void> {
    const reader = this.readers[name]!;
    const events = this.#heldEvents(reader, held);
    await held.reader.settle(events.length, held.startReport);
    const observed = held.reader.observed();
    const expected: Expectation = { kind: "events", events };
    // Events are checked against the model; the report must not change after the start.
    this.check(`held ${held.reader.path} subscription of ${name} (from #${held.startSeq})`, expected, observed, observed.report === held.startReport ? "none" : observed.report);
  }

  /** A reader's saved position after a resume: its newest event or watermark, or a reload. */
  async #advance(reader: Reader, path: Path, expected: Expectation, observed: Observed): Promise<void> {
    if (path === "bridge" && observed.caughtUp) {
      const seq = this.system.topic.cursorSequence(observed.caughtUp);
      const floor = observed.events.at(-1)?.streamSequence ?? (expected.kind === "events" ? reader.saved.seq : this.model.last);
      if (seq < floor || seq > this.model.last) this.fail(`caught_up #${seq} is outside [${floor}, ${this.model.last}]`);
      reader.saved = this.position(observed.caughtUp);
    } else if (expected.kind !== "events") reader.saved = await this.watermark(reader.tenant);
    else if (observed.events.length) reader.saved = this.position(observed.events.at(-1)!.cursor);
  }
}
