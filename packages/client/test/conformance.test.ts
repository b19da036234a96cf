/**
 * The cursor-contract model (packages/server/test/conformance) through the client engine: an
 * engine with one hub feed goes offline and online, the bridge restarts, other tenants push
 * retention and the topic is destroyed and re-created; what the app is shown must be exactly the
 * model's events of the tenant, once, in order, with one gap marker exactly where the model has
 * a gap or a mismatch.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { createSync, type Sync } from "@tidemark/server";
import { startTestNats, uniqueNamespace, type TestNats } from "@tidemark/testing";
import type { Position } from "../../server/test/conformance/model.js";
import { WAIT_MS } from "../../server/test/conformance/paths.js";
import { sleep } from "../../server/test/conformance/pump.js";
import { checkModel, modelSettings, withBrokerLog } from "../../server/test/conformance/run.js";
import { HUB_OPTIONS, System } from "../../server/test/conformance/system.js";
import { World, WATERMARK_WAIT_MS } from "../../server/test/conformance/world.js";
import { EngineReader, installRecordingWebSocket } from "./engine-reader.js";

installRecordingWebSocket();
const TENANT = "a";
const OPTIONS = { defaultRuns: 20, timeLimitMs: 120_000 };
const REASONS = { gap: "retention_gap", mismatch: "cursor_mismatch", invalid: "invalid_cursor" } as const;

/** The model run plus the engine and what its tab must show. */
class EngineWorld {
  readonly expected: string[] = [];
  #offlineAt: Position | undefined;
  #liveOpened = false;

  constructor(
    readonly world: World,
    readonly reader: EngineReader,
  ) {}

  async publish(tenant: string | undefined): Promise<void> {
    await this.world.publish(tenant, undefined);
    const event = this.world.model.current().at(-1)!;
    if (this.reader.online && tenant === TENANT) this.expected.push(`${event.seq}:${event.receipt.eventId}`);
    await this.settle();
  }

  async pressure(tenant: string | undefined, count: number): Promise<void> {
    await this.world.pressure(tenant, count, this.reader.online);
    await this.settle();
  }

  async recreate(by: "self" | "other"): Promise<void> {
    await this.world.recreate(by);
  }

  /**
   * Re-creates the topic under the open feed, then publishes an event of the tenant: the bridge
   * must reset the feed (`cursor_mismatch`), so the tab shows one gap marker and then only what
   * follows the reset's head.
   */
  async recreateUnderFeed(by: "self" | "other"): Promise<void> {
    await this.settle();
    const resets = () => this.reader.frames().flat().filter((f) => f.type === "reset").length;
    const before = resets();
    await this.world.recreate(by);
    await this.world.publish(TENANT, undefined);
    const end = Date.now() + WAIT_MS;
    while (resets() === before && Date.now() < end) await sleep(20);
    const reset = this.reader.frames().flat().filter((f) => f.type === "reset").at(-1);
    if (resets() === before || reset?.reason !== "cursor_mismatch") {
      this.world.fail(`the feed was not reset after its topic was re-created (last reset: ${JSON.stringify(reset)})`);
    }
    const head = this.world.system.topic.cursorSequence(String(reset.head));
    this.expected.push("gap:cursor_mismatch", ...this.world.model.tenantEventsAfter(TENANT, head).map((e) => `${e.seq}:${e.receipt.eventId}`));
    await this.settle();
  }

  async offline(): Promise<void> {
    this.#offlineAt = await this.#freshPosition("going offline");
    await this.reader.setOnline(false);
  }

  async online(): Promise<void> {
    await this.reader.setOnline(true);
    this.#resumeFrom(this.#offlineAt!);
    await this.settle();
  }

  async restartBridge(): Promise<void> {
    const at = this.reader.online ? await this.#freshPosition("a bridge restart") : undefined;
    const sockets = this.reader.frames().length;
    await this.world.system.stopBridge();
    await this.world.system.startBridge();
    if (at) {
      this.#resumeFrom(at);
      // The model resumes the feed from `at` now: wait until the engine did (on a new socket), or
      // events published next could push `at` out of retention before it asks.
      const resubscribed = () => this.reader.frames().slice(sockets).some((frames) => frames.some((f) => f.type === "subscribed" && f.mode === "hub"));
      const end = Date.now() + WAIT_MS;
      while (!resubscribed() && Date.now() < end) await sleep(20);
      if (!resubscribed()) this.world.fail("after a bridge restart the engine never subscribed its hub feed again");
    }
    await this.settle();
  }

  /** Opens a live feed on the open socket: it must subscribe (and the tab come back to `live`). */
  async openLive(): Promise<void> {
    this.#liveOpened = true;
    await this.reader.engine.open("t", { id: "l", mode: "live", topic: this.world.system.id, tenantId: TENANT, effects: false });
    const end = Date.now() + WAIT_MS;
    const subscribed = () => this.reader.frames().at(-1)?.some((f) => f.type === "subscribed" && f.mode === "live");
    while (!(subscribed() && this.reader.status() === "live") && Date.now() < end) await sleep(20);
    if (!subscribed()) this.world.fail(`a live feed opened on an open socket never subscribed (tab status ${this.reader.status()})`);
    if (this.reader.status() !== "live") this.world.fail(`the tab stays ${this.reader.status()} after a live feed was opened`);
  }

  get liveOpened(): boolean {
    return this.#liveOpened;
  }

  async idle(ms: number): Promise<void> {
    await sleep(ms);
    await this.settle();
  }

  /** Waits until the tab shows what the model expects (bounded), then compares. */
  async settle(): Promise<void> {
    await this.world.settle();
    if (!this.reader.online) return;
    const same = () => JSON.stringify(this.reader.shown()) === JSON.stringify(this.expected);
    const end = Date.now() + WAIT_MS;
    while (!same() && Date.now() < end) await sleep(20);
    await sleep(50);
    if (!same()) this.world.fail(`the tab shows [${this.reader.shown().join(" ")}], the model expects [${this.expected.join(" ")}]`);
  }

  /** The engine's newest position once the bridge made it fresh (DESIGN §3: idle watermarks). */
  async #freshPosition(what: string): Promise<Position> {
    await this.settle();
    const { model, system } = this.world;
    const end = Date.now() + WATERMARK_WAIT_MS;
    let p = this.reader.position();
    while ((p === undefined || !model.resumable(system.topic.cursorSequence(p))) && Date.now() < end) {
      await sleep(50);
      p = this.reader.position();
    }
    if (p === undefined || !model.resumable(system.topic.cursorSequence(p))) {
      this.world.fail(`before ${what}, the engine's newest watermark ${p && system.topic.cursorSequence(p)} is behind the window ${JSON.stringify(model.window)}`);
    }
    return this.world.position(p);
  }

  /** The engine resubscribes from `at`: the model says which events, or one gap marker. */
  #resumeFrom(at: Position): void {
    const expectation = this.world.model.expect(at, TENANT);
    if (expectation.kind === "events") this.expected.push(...expectation.events.map((e) => `${e.seq}:${e.receipt.eventId}`));
    else this.expected.push(`gap:${REASONS[expectation.kind]}`);
  }
}

type Cmd = fc.AsyncCommand<EngineWorld, EngineWorld>;
const command = (name: string, check: (w: EngineWorld) => boolean, run: (w: EngineWorld) => Promise<void>): Cmd => ({
  check,
  run: (_m, w) => run(w),
  toString: () => name,
});
const always = () => true;
const commands: fc.Arbitrary<Cmd>[] = [
  fc.constantFrom<string | undefined>("a", "a", "b", undefined).map((t) => command(`publish(${t ?? "-"})`, always, (w) => w.publish(t))),
  fc.tuple(fc.constantFrom<string | undefined>("b", "c", undefined), fc.integer({ min: 2, max: 9 })).map(([t, n]) =>
    command(`pressure(${t ?? "-"} x${n})`, always, (w) => w.pressure(t, n)),
  ),
  fc.constantFrom<"self" | "other">("self", "other").map((by) => command(`recreate(by ${by})`, (w) => !w.reader.online, (w) => w.recreate(by))),
  fc.constantFrom<"self" | "other">("self", "other").map((by) =>
    command(`recreateUnderFeed(by ${by})`, (w) => w.reader.online, (w) => w.recreateUnderFeed(by)),
  ),
  fc.constant(command("offline()", (w) => w.reader.online, (w) => w.offline())),
  fc.constant(command("online()", (w) => !w.reader.online, (w) => w.online())),
  fc.constant(command("restartBridge()", always, (w) => w.restartBridge())),
  fc.constant(command("openLive()", (w) => w.reader.online && !w.liveOpened, (w) => w.openLive())),
  fc.integer({ min: 100, max: 1_500 }).map((ms) => command(`idle(${ms} ms)`, always, (w) => w.idle(ms))),
];

let nats: TestNats;
let main: Sync;
let other: Sync;

beforeAll(async () => {
  nats = await startTestNats();
  const namespace = uniqueNamespace("engmodel");
  main = createSync({ namespace, nats: { servers: nats.url }, hubs: HUB_OPTIONS });
  other = createSync({ namespace, nats: { servers: nats.url } });
});
afterAll(async () => {
  await main?.close();
  await other?.close();
  await nats?.[Symbol.asyncDispose]();
});

describe("conformance: the cursor contract through the client engine (model)", () => {
  it(
    "cursor contract - the engine shows each event of its tenant once, in order, and a gap marker exactly where the model has a gap or mismatch",
    async () => {
      let run = 0;
      const property = fc.asyncProperty(fc.commands(commands, { maxCommands: 12 }), async (cmds) => {
        const world = new World(new System(main, other, `e${run++}`));
        let reader: EngineReader | undefined;
        try {
          await world.init({});
          reader = await EngineReader.open(world.system.wsUrl, world.system.id, TENANT);
          const w = new EngineWorld(world, reader);
          const end = Date.now() + WAIT_MS;
          while (reader.status() !== "live" && Date.now() < end) await sleep(20);
          if (reader.status() !== "live") world.fail(`the engine never became live (${reader.status()})`);
          await fc.asyncModelRun(() => ({ model: w, real: w }), cmds);
        } finally {
          await reader?.shutdown();
          await world.dispose();
        }
      });
      const { runs } = await checkModel("cursor-contract-engine", property, OPTIONS).catch((err: unknown) => {
        throw withBrokerLog(err, nats);
      });
      expect(runs).toBeGreaterThan(0);
    },
    modelSettings(OPTIONS).timeLimitMs + 60_000,
  );
});
