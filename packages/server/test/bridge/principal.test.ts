/** `welcome.principal` / `refreshed.principal`: an opaque, stable id the client keys saved history by. */
import { describe, it, expect } from "vitest";
import { ownTenants, useBridgeFixture } from "./fixture.js";

const fx = useBridgeFixture();
fx.tokens.set("alice-1", { id: "alice", tenants: ["a"] });
fx.tokens.set("alice-2", { id: "alice", tenants: ["a"] });
fx.tokens.set("bob", { id: "bob", tenants: ["a"] });

describe("bridge principal id", () => {
  it("bridge - welcome names the principal by an opaque id: the same for every token and bridge of the user, another for another user", async () => {
    const sync = fx.sync();
    const topic = sync.topic<number>({ id: "notes" });
    const one = await fx.start({ topics: [{ topic, authorize: ownTenants }] }, sync);
    const two = await fx.start({ topics: [{ topic, authorize: ownTenants }] }, sync);
    const welcome = async (run: typeof one, token: string) => {
      const client = await run.connect(token);
      return String(client.log.find((f) => f.type === "welcome")!.principal);
    };
    const a1 = await welcome(one, "alice-1");
    expect(a1).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(a1).not.toContain("alice");
    expect(await welcome(one, "alice-2")).toBe(a1);
    expect(await welcome(two, "alice-1")).toBe(a1);
    expect(await welcome(two, "bob")).not.toBe(a1);
  });

  it("bridge - refreshed names the principal of the new token", async () => {
    const sync = fx.sync();
    const topic = sync.topic<number>({ id: "notes" });
    const run = await fx.start({ topics: [{ topic, authorize: ownTenants }] }, sync);
    const client = await run.connect("alice-1");
    const alice = String(client.log.find((f) => f.type === "welcome")!.principal);
    client.send({ type: "refresh", token: "alice-2" });
    expect((await client.next((f) => f.type === "refreshed")).principal).toBe(alice);
    client.send({ type: "refresh", token: "bob" });
    const bob = (await client.next((f) => f.type === "refreshed")).principal;
    expect(typeof bob).toBe("string");
    expect(bob).not.toBe(alice);
  });
});
