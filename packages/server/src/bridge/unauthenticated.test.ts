import { describe, expect, it } from "vitest";
import { addressKey, UnauthenticatedCount, type ShedReason, type WaitingSocket } from "./unauthenticated.js";

const limits = { maxUnauthenticated: 4, maxUnauthenticatedPerAddress: 3, unauthenticatedTimeMs: 10_000, unauthenticatedTimeUnderPressureMs: 2_000 };

/** A socket that records why it was shed; its place is given back as the bridge's close would. */
function socket(name: string, shed: string[]): WaitingSocket {
  return { shed: (why: ShedReason) => shed.push(`${name}:${why}`) };
}

describe("unauthenticated - address keys", () => {
  it("unauthenticated - an IPv4 address is its own key", () => {
    expect(addressKey("127.0.0.2")).toBe("127.0.0.2");
    expect(addressKey("127.0.0.2")).not.toBe(addressKey("127.0.0.3"));
  });

  it("unauthenticated - IPv6 addresses count per /64", () => {
    expect(addressKey("::1")).toBe("0:0:0:0::/64");
    expect(addressKey("2001:db8:1:2::1")).toBe("2001:db8:1:2::/64");
    // Any two addresses of one /64 are one key, however they are written.
    expect(addressKey("2001:db8:1:2:aaaa:bbbb:cccc:dddd")).toBe(addressKey("2001:0DB8:0001:0002::ffff"));
    expect(addressKey("2001:db8:1:2::1")).not.toBe(addressKey("2001:db8:1:3::1"));
    expect(addressKey("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(addressKey("fe80::1%eth0")).toBe("fe80:0:0:0::/64%eth0");
  });

  it("unauthenticated - IPv4-mapped IPv6 addresses count as IPv4", () => {
    expect(addressKey("::ffff:127.0.0.5")).toBe("127.0.0.5");
    expect(addressKey("::ffff:7f00:5")).toBe("127.0.0.5");
    expect(addressKey("0:0:0:0:0:ffff:10.1.2.3")).toBe("10.1.2.3");
  });

  it("unauthenticated - a string that is not an address counts as itself", () => {
    for (const odd of ["1:2:3", "1::2::3", "1:2:3:4:5:6:7:8:9", "g::1", "::ffff:1.2.3.256", "unix"]) expect(addressKey(odd)).toBe(odd);
  });
});

describe("unauthenticated - places", () => {
  it("unauthenticated - one /64 shares the per-address cap", () => {
    const count = new UnauthenticatedCount(limits);
    const shed: string[] = [];
    for (let i = 1; i <= 3; i++) expect(count.add(`2001:db8:0:1::${i}`, socket(`a${i}`, shed), 0)).toBeDefined();
    expect(count.admits("2001:db8:0:1::99")).toBe(false);
    expect(count.add("2001:db8:0:1::99", socket("x", shed), 0)).toBeUndefined();
    expect(count.admits("2001:db8:0:2::1")).toBe(true);
    expect(shed).toEqual([]);
  });

  it("unauthenticated - a full cap sheds the oldest silent socket of the address holding the most", () => {
    const count = new UnauthenticatedCount(limits);
    const shed: string[] = [];
    const b = count.add("10.0.0.2", socket("b1", shed), 1)!;
    count.add("10.0.0.1", socket("a1", shed), 2);
    count.add("10.0.0.2", socket("b2", shed), 3);
    count.add("10.0.0.2", socket("b3", shed), 4);
    expect(count.size).toBe(4);
    // a1 is older than b2 and b3, but 10.0.0.2 holds three: its oldest goes.
    expect(count.add("10.0.0.9", socket("c1", shed), 5)).toBeDefined();
    expect(shed).toEqual(["b1:evicted"]);
    expect(count.size).toBe(4);
    count.remove(b); // the shed socket's close gives its place back: a no-op now
    expect(count.size).toBe(4);
    // 10.0.0.2 still holds the most (two).
    count.add("10.0.0.1", socket("a2", shed), 6);
    expect(shed).toEqual(["b1:evicted", "b2:evicted"]);
  });

  it("unauthenticated - among equal addresses the oldest silent socket goes; one that spoke is kept", () => {
    const count = new UnauthenticatedCount(limits);
    const shed: string[] = [];
    const first = count.add("10.0.0.1", socket("a", shed), 1)!;
    count.add("10.0.0.2", socket("b", shed), 2);
    count.add("10.0.0.3", socket("c", shed), 3);
    count.add("10.0.0.4", socket("d", shed), 4);
    count.spoke(first);
    count.add("10.0.0.5", socket("e", shed), 5);
    expect(shed).toEqual(["b:evicted"]);
  });

  it("unauthenticated - the cap refuses only when every waiting socket has spoken", () => {
    const count = new UnauthenticatedCount(limits);
    const shed: string[] = [];
    const places = ["1", "2", "3", "4"].map((n) => count.add(`10.0.0.${n}`, socket(n, shed), 1)!);
    for (const place of places) count.spoke(place);
    expect(count.admits("10.0.0.9")).toBe(false);
    expect(count.add("10.0.0.9", socket("x", shed), 2)).toBeUndefined();
    count.remove(places[0]!); // a hello done
    expect(count.add("10.0.0.9", socket("x", shed), 3)).toBeDefined();
    expect(shed).toEqual([]);
  });

  it("unauthenticated - from half the cap, silent sockets older than the shorter deadline are shed", () => {
    const count = new UnauthenticatedCount({ ...limits, maxUnauthenticated: 8 });
    const shed: string[] = [];
    count.add("10.0.0.1", socket("a", shed), 0);
    count.add("10.0.0.2", socket("b", shed), 0);
    count.add("10.0.0.3", socket("c", shed), 0);
    // Three of eight: no pressure, the plain deadline (the session's) applies.
    count.shedLate(5_000);
    expect(shed).toEqual([]);
    count.spoke(count.add("10.0.0.4", socket("d", shed), 0)!);
    // Four of eight: the oldest silent one past 2 s goes, and shedding stops below half.
    count.shedLate(5_000);
    expect(shed).toEqual(["a:late"]);
    expect(count.size).toBe(3);
    // A newcomer brings the pressure back; the next one finds it and sheds the next late one
    // first. d spoke and is never shed for lateness.
    count.add("10.0.0.5", socket("e", shed), 5_000);
    expect(shed).toEqual(["a:late"]);
    count.add("10.0.0.6", socket("f", shed), 5_000);
    expect(shed).toEqual(["a:late", "b:late"]);
    expect(count.size).toBe(4);
  });

  it("unauthenticated - the shorter deadline is never longer than the plain one", () => {
    const count = new UnauthenticatedCount({ ...limits, unauthenticatedTimeMs: 500 });
    const shed: string[] = [];
    count.add("10.0.0.1", socket("a", shed), 0);
    count.add("10.0.0.2", socket("b", shed), 0);
    count.shedLate(501);
    expect(shed).toEqual(["a:late"]);
  });

  it("unauthenticated - a refused address is told when its oldest silent socket's deadline ends", () => {
    const count = new UnauthenticatedCount({ ...limits, maxUnauthenticated: 100 });
    const shed: string[] = [];
    expect(count.retryAfterMs("10.0.0.1", 0)).toBe(10_000); // nothing waiting: the plain deadline bounds it
    count.add("10.0.0.1", socket("a", shed), 1_000);
    count.add("10.0.0.1", socket("b", shed), 2_000);
    expect(count.retryAfterMs("10.0.0.1", 4_000)).toBe(7_000);
    expect(count.retryAfterMs("::ffff:10.0.0.1", 4_000)).toBe(7_000);
  });

  it("unauthenticated - a hello that was answered tells the rate how long it held its place; a silent socket does not", () => {
    const count = new UnauthenticatedCount({ ...limits, maxUnauthenticated: 10 });
    const before = count.rate.helloMs;
    const silent = count.add("10.0.0.1", socket("a", []), 0)!;
    count.remove(silent, 5_000);
    expect(count.rate.helloMs).toBe(before);
    const spoke = count.add("10.0.0.1", socket("b", []), 0)!;
    count.spoke(spoke);
    count.remove(spoke, 50);
    expect(count.rate.helloMs).toBeLessThan(before);
  });

  it("unauthenticated - refusals name comebacks one slot apart; an address over its own cap no later than its place frees", () => {
    const count = new UnauthenticatedCount({ ...limits, maxUnauthenticated: 100, maxUnauthenticatedPerAddress: 2 });
    const zero = () => 0;
    const first = count.comebackMs("10.0.0.9", 0, zero);
    expect(count.comebackMs("10.0.0.9", 0, zero)).toBeGreaterThan(first);
    count.add("10.0.0.1", socket("a", []), 0);
    count.add("10.0.0.1", socket("b", []), 0);
    // 10.0.0.1 is full: its oldest silent socket's deadline (10 s; 9 s at 1,000) bounds the hint.
    expect(count.comebackMs("10.0.0.1", 1_000, zero)).toBeLessThanOrEqual(9_000);
    expect(count.refusingRoom).toBe(true);
    for (let i = 0; i < 100; i++) count.refusingOpened();
    expect(count.refusingRoom).toBe(false);
    count.refusingClosed();
    expect(count.refusingRoom).toBe(true);
  });
});
