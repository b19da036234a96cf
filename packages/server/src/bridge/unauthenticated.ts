/**
 * @internal Sockets that have not said a valid `hello` yet, per process and per remote address
 * (an IPv6 /64 is one address). They cost a socket and its buffers before anyone vouched for
 * them, so they are capped; but a neighbour that fills the process cap must not lock others
 * out, so a full cap makes room instead of refusing: the oldest silent socket of the address
 * holding the most is closed (1013). Past half the cap, silent sockets get a shorter deadline.
 * Every refusal names when to come back (hello-rate.ts), and the sockets accepted only to be
 * told so are capped too.
 */
import { COMEBACK_MIN_MS, HelloRate } from "./hello-rate.js";

/** Why a waiting socket lost its place. */
export type ShedReason =
  /** The process cap is full and a newcomer takes the place. */
  | "evicted"
  /** No `hello` within the shorter deadline that applies past half the cap. */
  | "late";

/** A socket as the count sees it: something it can close. */
export interface WaitingSocket {
  /** Closes the socket; the count has already let go of its place. */
  shed(why: ShedReason): void;
}

/** One socket's place in the count, from its open until its `hello` is done or it closes. */
export class WaitingPlace {
  /** The first frame arrived (a `hello` being authenticated): not shed, only the plain deadline applies. */
  spoke = false;
  removed = false;

  constructor(
    readonly key: string | undefined,
    readonly openedAt: number,
    readonly socket: WaitingSocket,
  ) {}
}

/** The places of one address (key): how many, and its silent ones oldest first. */
interface Group {
  count: number;
  readonly silent: Set<WaitingPlace>;
}

export interface UnauthenticatedLimits {
  maxUnauthenticated: number;
  maxUnauthenticatedPerAddress: number;
  unauthenticatedTimeMs: number;
  unauthenticatedTimeUnderPressureMs: number;
}

export class UnauthenticatedCount {
  #total = 0;
  readonly #groups = new Map<string | undefined, Group>();
  /** Every silent place, oldest first (a Set keeps insertion order). */
  readonly #silent = new Set<WaitingPlace>();
  readonly #max: number;
  readonly #maxPerAddress: number;
  readonly #timeMs: number;
  readonly #pressureTimeMs: number;
  /** How fast hellos complete: the comeback times of refusals. */
  readonly rate: HelloRate;
  /** Sockets accepted only to be refused in-band (a `drain` frame, then 1013), still open. */
  #refusing = 0;
  /** The clock of the hello deadlines: the bridge's, which leaves out its own stalls (stall.ts). */
  readonly #now: () => number;

  constructor(limits: UnauthenticatedLimits, now: () => number = Date.now) {
    this.#now = now;
    this.#max = limits.maxUnauthenticated;
    this.#maxPerAddress = limits.maxUnauthenticatedPerAddress;
    this.#timeMs = limits.unauthenticatedTimeMs;
    this.#pressureTimeMs = Math.min(limits.unauthenticatedTimeMs, limits.unauthenticatedTimeUnderPressureMs);
    this.rate = new HelloRate(limits.maxUnauthenticated);
  }

  get size(): number {
    return this.#total;
  }

  /** At least half the process cap is waiting: silent sockets get the shorter deadline. */
  get underPressure(): boolean {
    return this.#total * 2 >= this.#max;
  }

  /**
   * Whether one more socket from `address` (undefined: unknown) would get a place: its address
   * is under its own cap, and the process has room or a silent socket to make room with.
   */
  admits(address: string | undefined): boolean {
    const key = address === undefined ? undefined : addressKey(address);
    if (key !== undefined && (this.#groups.get(key)?.count ?? 0) >= this.#maxPerAddress) return false;
    return this.#total < this.#max || this.#silent.size > 0;
  }

  /**
   * When a socket of `address` refused now (or shed to make room) should come back, in ms: the
   * next comeback of the schedule (hello-rate.ts), spread over the expected drain of the sockets
   * waiting; for an address over its own cap, no later than its place must be free.
   */
  comebackMs(address: string | undefined, now = this.#now(), random: () => number = Math.random): number {
    const hint = this.rate.comebackMs(this.#total, now, random);
    const key = address === undefined ? undefined : addressKey(address);
    if (key === undefined || (this.#groups.get(key)?.count ?? 0) < this.#maxPerAddress) return hint;
    return Math.max(COMEBACK_MIN_MS, Math.min(hint, this.retryAfterMs(address, now)));
  }

  /**
   * When a place for `address` should be free, at the latest, in ms: its oldest silent socket's
   * deadline, else the plain hello deadline (every waiting socket has said hello or is gone by then).
   */
  retryAfterMs(address: string | undefined, now = this.#now()): number {
    const group = this.#groups.get(address === undefined ? undefined : addressKey(address));
    const oldest = group?.silent.values().next().value;
    if (!oldest) return this.#timeMs;
    return Math.max(0, oldest.openedAt + (this.underPressure ? this.#pressureTimeMs : this.#timeMs) - now);
  }

  /** Gives `socket` a place, making room if the process cap is full; undefined when refused. */
  add(address: string | undefined, socket: WaitingSocket, now = this.#now()): WaitingPlace | undefined {
    this.shedLate(now);
    if (!this.admits(address)) return undefined;
    if (this.#total >= this.#max) this.#evict();
    const key = address === undefined ? undefined : addressKey(address);
    const place = new WaitingPlace(key, now, socket);
    let group = this.#groups.get(key);
    if (!group) this.#groups.set(key, (group = { count: 0, silent: new Set() }));
    group.count++;
    group.silent.add(place);
    this.#silent.add(place);
    this.#total++;
    return place;
  }

  /** The socket sent its first frame: from now on it keeps its place until its deadline. */
  spoke(place: WaitingPlace): void {
    if (place.removed || place.spoke) return;
    place.spoke = true;
    this.#silent.delete(place);
    this.#groups.get(place.key)?.silent.delete(place);
  }

  /**
   * Room for one more socket accepted only to be refused in-band: as many as the cap on waiting
   * sockets. Past it a refusal is an HTTP 503, which costs no socket.
   */
  get refusingRoom(): boolean {
    return this.#refusing < this.#max;
  }

  /** A socket accepted to be refused opened (counted until it closes). */
  refusingOpened(): void {
    this.#refusing++;
  }

  refusingClosed(): void {
    this.#refusing--;
  }

  /**
   * The socket said hello or closed. Idempotent. A socket that had sent its hello gives the rate
   * the time it held its place.
   */
  remove(place: WaitingPlace, now = this.#now()): void {
    if (place.removed) return;
    place.removed = true;
    if (place.spoke) this.rate.completed(now - place.openedAt);
    this.#total--;
    this.#silent.delete(place);
    const group = this.#groups.get(place.key);
    if (!group) return;
    group.silent.delete(place);
    if (--group.count <= 0) this.#groups.delete(place.key);
  }

  /** Under pressure, closes the silent sockets older than the shorter deadline (oldest first). */
  shedLate(now: number): void {
    for (const place of this.#silent) {
      if (!this.underPressure || now - place.openedAt <= this.#pressureTimeMs) return;
      this.remove(place);
      place.socket.shed("late");
    }
  }

  /**
   * Closes the oldest silent socket of the address with the most silent sockets (a tie: the
   * older one). A client that is alone on its address is reached only when every address
   * holds at most one silent socket, and then only after all older ones.
   */
  #evict(): void {
    let victim: WaitingPlace | undefined;
    let most = 0;
    for (const group of this.#groups.values()) {
      const size = group.silent.size;
      if (size === 0 || size < most) continue;
      const oldest = group.silent.values().next().value as WaitingPlace;
      if (size > most || oldest.openedAt < victim!.openedAt) {
        victim = oldest;
        most = size;
      }
    }
    if (!victim) return;
    this.remove(victim);
    victim.socket.shed("evicted");
  }
}

/**
 * The key an address is counted under: an IPv4 address itself (an IPv4-mapped IPv6 address
 * counts as its IPv4 address), and for IPv6 its /64 prefix: a host usually gets a whole /64,
 * so counting single IPv6 addresses would let one host take the whole process cap. Anything
 * else (a name, a malformed address) counts as itself.
 */
export function addressKey(address: string): string {
  if (!address.includes(":")) return address;
  const groups = ipv6Groups(address);
  if (!groups) return address;
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return `${groups[6]! >> 8}.${groups[6]! & 255}.${groups[7]! >> 8}.${groups[7]! & 255}`;
  }
  const zone = address.indexOf("%");
  return `${groups.slice(0, 4).map((g) => g.toString(16)).join(":")}::/64${zone < 0 ? "" : address.slice(zone)}`;
}

const HEX_GROUP = /^[0-9a-f]{1,4}$/i;
const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/** The eight 16-bit groups of an IPv6 address (`::` expanded, a dotted IPv4 tail read), or undefined. */
function ipv6Groups(address: string): number[] | undefined {
  const zone = address.indexOf("%");
  let text = zone < 0 ? address : address.slice(0, zone);
  const lastColon = text.lastIndexOf(":");
  const v4 = IPV4.exec(text.slice(lastColon + 1));
  if (v4) {
    const b = v4.slice(1).map(Number);
    if (b.some((n) => n > 255)) return undefined;
    text = `${text.slice(0, lastColon + 1)}${((b[0]! << 8) | b[1]!).toString(16)}:${((b[2]! << 8) | b[3]!).toString(16)}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const part = (s: string | undefined) => (s ? s.split(":") : []);
  const head = part(halves[0]);
  const tail = part(halves[1]);
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const all = [...head, ...Array<string>(halves.length === 1 ? 0 : missing).fill("0"), ...tail];
  if (!all.every((g) => HEX_GROUP.test(g))) return undefined;
  return all.map((g) => parseInt(g, 16));
}

/**
 * The remote address of an upgrade, from what the runtime adapter put in Hono's env: the
 * `IncomingMessage` on Node (`@hono/node-server` and `serveBridge`). IPv4-mapped IPv6 addresses
 * are folded to IPv4 so one client is one key.
 */
export function remoteAddressOf(env: unknown): string | undefined {
  const incoming = (env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming;
  const address = incoming?.socket?.remoteAddress;
  if (typeof address !== "string") return undefined;
  return address.startsWith("::ffff:") && address.includes(".") ? address.slice(7) : address;
}
