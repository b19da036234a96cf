/**
 * fast-check commands of the cursor-contract model: each does one thing to the world and checks
 * the readers against the model. `toString()` is what a failing run prints as its command list.
 */
import fc from "fast-check";
import type { HeldPath, Path } from "./paths.js";
import type { World } from "./world.js";

type Cmd = fc.AsyncCommand<World, World>;

/** Readers of the suite and their tenants; `c` and topic-wide events are other tenants' traffic. */
export const READERS = { ra: "a", rb: "b", all: undefined } as const;
type ReaderName = keyof typeof READERS;
const readerName = fc.constantFrom<ReaderName>("ra", "rb", "ra", "rb", "all");

class Publish implements Cmd {
  constructor(
    readonly tenant: string | undefined,
    readonly key: string | undefined,
  ) {}
  check = () => true;
  run = (_: World, w: World) => w.publish(this.tenant, this.key);
  toString = () => `publish(${this.tenant ?? "-"}${this.key ? `, key ${this.key}` : ""})`;
}

class Pressure implements Cmd {
  constructor(
    readonly tenant: string | undefined,
    readonly count: number,
  ) {}
  check = () => true;
  run = (_: World, w: World) => w.pressure(this.tenant, this.count);
  toString = () => `pressure(${this.tenant ?? "-"} x${this.count})`;
}

class Recreate implements Cmd {
  constructor(
    readonly by: "self" | "other",
    readonly keepHeld: boolean,
  ) {}
  check = () => true;
  run = (_: World, w: World) => w.recreate(this.by, this.keepHeld);
  toString = () => `recreate(by ${this.by}${this.keepHeld ? ", under held subscriptions" : ""})`;
}

class Save implements Cmd {
  /** A number saves the corrupted string `NOT_CURSORS[n]`. */
  constructor(
    readonly reader: ReaderName,
    readonly how: "watermark" | "latest" | number,
  ) {}
  check = (m: Readonly<World>) => !m.readers[this.reader]!.held;
  run = (_: World, w: World) => w.save(this.reader, this.how);
  toString = () => `save(${this.reader}, ${typeof this.how === "number" ? `not-a-cursor ${this.how}` : this.how})`;
}

/** Saves a cursor minted with `cursorAt()` past the head: the highest sequence, or the next one. */
class SavePastHead implements Cmd {
  constructor(
    readonly reader: ReaderName,
    readonly how: "max" | "next",
  ) {}
  check = (m: Readonly<World>) => !m.readers[this.reader]!.held;
  run = (_: World, w: World) => w.savePastHead(this.reader, this.how);
  toString = () => `savePastHead(${this.reader}, ${this.how})`;
}

class ReplayUntil implements Cmd {
  constructor(
    readonly reader: ReaderName,
    readonly untilOf: ReaderName,
  ) {}
  check = () => true;
  run = (_: World, w: World) => w.replayUntil(this.reader, this.untilOf);
  toString = () => `replayUntil(${this.reader}, until ${this.untilOf}'s cursor)`;
}

class LiveProbe implements Cmd {
  constructor(readonly tenant: string | undefined) {}
  check = () => true;
  run = (_: World, w: World) => w.liveProbe(this.tenant);
  toString = () => `liveProbe(${this.tenant ?? "-"})`;
}

class Resume implements Cmd {
  constructor(
    readonly reader: ReaderName,
    readonly path: Path,
  ) {}
  check = () => true;
  run = (_: World, w: World) => w.resume(this.reader, this.path);
  toString = () => `resume(${this.reader}, ${this.path})`;
}

class Hold implements Cmd {
  constructor(
    readonly reader: ReaderName,
    readonly path: HeldPath,
  ) {}
  check = (m: Readonly<World>) => !m.readers[this.reader]!.held;
  run = (_: World, w: World) => w.hold(this.reader, this.path);
  toString = () => `hold(${this.reader}, ${this.path})`;
}

class Release implements Cmd {
  constructor(readonly reader: ReaderName) {}
  check = (m: Readonly<World>) => !!m.readers[this.reader]!.held;
  run = (_: World, w: World) => w.release(this.reader);
  toString = () => `release(${this.reader})`;
}

class RestartBridge implements Cmd {
  check = () => true;
  run = (_: World, w: World) => w.restartBridge();
  toString = () => "restartBridge()";
}

class Crowd implements Cmd {
  constructor(
    readonly tenant: string | undefined,
    readonly sockets: number,
    readonly dropAfterMs: number,
  ) {}
  check = () => true;
  run = (_: World, w: World) => w.crowd(this.tenant, this.sockets, this.dropAfterMs);
  toString = () => `crowd(${this.tenant ?? "-"} x${this.sockets}, dropped after ${this.dropAfterMs} ms)`;
}

class Idle implements Cmd {
  constructor(readonly ms: number) {}
  check = () => true;
  run = (_: World, w: World) => w.idle(this.ms);
  toString = () => `idle(${this.ms} ms)`;
}

const tenant = fc.constantFrom<string | undefined>("a", "b", "c", undefined);

/** Every command of the model, weighted towards traffic and resumes. */
export const commandArbitraries: fc.Arbitrary<Cmd>[] = [
  fc.tuple(tenant, fc.constantFrom<string | undefined>(undefined, "k1", "k2")).map(([t, k]) => new Publish(t, k)),
  fc.tuple(tenant, fc.constantFrom<string | undefined>(undefined, "k1", "k2")).map(([t, k]) => new Publish(t, k)),
  fc.tuple(fc.constantFrom<string | undefined>("c", "b", undefined), fc.integer({ min: 2, max: 9 })).map(([t, n]) => new Pressure(t, n)),
  fc.tuple(fc.constantFrom<"self" | "other">("self", "other"), fc.boolean()).map(([by, keep]) => new Recreate(by, keep)),
  fc.tuple(readerName, fc.constantFrom<"watermark" | "latest" | number>("watermark", "latest", "watermark", "latest", 0, 1, 2, 3)).map(([r, h]) => new Save(r, h)),
  fc.tuple(readerName, fc.constantFrom<"max" | "next">("max", "next")).map(([r, h]) => new SavePastHead(r, h)),
  fc.tuple(readerName, readerName).map(([r, u]) => new ReplayUntil(r, u)),
  tenant.map((t) => new LiveProbe(t)),
  fc.tuple(readerName, fc.constantFrom<Path>("replay", "follow", "hub", "bridge")).map(([r, p]) => new Resume(r, p)),
  fc.tuple(readerName, fc.constantFrom<Path>("replay", "follow", "hub", "bridge")).map(([r, p]) => new Resume(r, p)),
  fc.tuple(readerName, fc.constantFrom<HeldPath>("hub", "bridge")).map(([r, p]) => new Hold(r, p)),
  readerName.map((r) => new Release(r)),
  fc.constant(new RestartBridge()),
  fc.tuple(tenant, fc.integer({ min: 10, max: 40 }), fc.constantFrom(0, 5, 30)).map(([t, n, ms]) => new Crowd(t, n, ms)),
  fc.integer({ min: 100, max: 1_500 }).map((ms) => new Idle(ms)),
];

/**
 * A fixed list that takes a cursor minted past the head through every read path (the random
 * lists reach each only by chance): each must refuse it as `invalid` while it is past the head,
 * and a held bridge subscription goes on from the reset's head. `next` then becomes an ordinary
 * position once the topic reaches it.
 */
export function pastHeadCommands(): Cmd[] {
  const max = (r: ReaderName) => new SavePastHead(r, "max");
  return [
    new Publish("a", undefined),
    new Publish("b", undefined),
    ...(["replay", "follow", "hub", "bridge"] as const).flatMap((p) => [max("ra"), new Resume("ra", p)]),
    max("all"),
    new ReplayUntil("all", "ra"),
    max("rb"),
    new Hold("rb", "hub"),
    new SavePastHead("ra", "next"),
    new Hold("ra", "bridge"),
    new Publish("a", undefined),
    new Release("ra"),
    new SavePastHead("rb", "next"),
    new Publish("c", undefined),
    new Resume("rb", "replay"),
    new SavePastHead("all", "next"),
    new ReplayUntil("ra", "all"),
  ];
}
