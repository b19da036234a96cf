import { describe, it, expect } from "vitest";
import { jetstream } from "@nats-io/jetstream";
import { InvalidArgumentError, ResourceDriftError } from "../../src/index.js";
import { collect, failure, useCoreFixture } from "./fixture.js";

const fx = useCoreFixture();
const KiB = 1024;
const MiB = 1024 * KiB;

describe("declarations", () => {
  it("declare - a declaration that can never be valid throws at sync.topic()", () => {
    const s = fx.sync();
    for (const id of ["", "Upper", ".lead", "a..b", "trail.", "sp ace", "x".repeat(129), "a*b", "a>b"]) {
      expect(() => s.topic({ id }), id).toThrow(InvalidArgumentError);
    }
    expect(() => s.topic({ id: "ok", retention: { maxBytes: 128 * KiB } })).toThrow(/maxPayloadBytes \+ 4 KiB/);
    expect(() => s.topic({ id: "ok", deadLetterRetention: { maxBytes: 100 * KiB } })).toThrow(/dead letter/);
    expect(() => s.topic({ id: "ok", replicas: 0 })).toThrow(/replicas/);
    expect(() => s.topic({ id: "ok", retention: { maxAgeMs: -1 } })).toThrow(/retention.maxAgeMs/);
    expect(s.topic({ id: "ok", maxPayloadBytes: 1024, retention: { maxBytes: 5 * KiB } }).id).toBe("ok");
    expect(s.topic({ id: "a_b.c-d" }).id).toBe("a_b.c-d");
  });

  it("declare - dedupeWindowMs is capped at retention.maxAgeMs", async () => {
    const s = fx.sync();
    const t = s.topic({ id: "short", retention: { maxAgeMs: 60_000 }, dedupeWindowMs: 300_000 });
    expect(t.options.dedupeWindowMs).toBe(60_000);
    await t.publish({ data: 1 });
    const info = await fx.jsm.streams.info(`TMEV_${s.namespace}_short`);
    expect(info.config.duplicate_window).toBe(60_000 * 1e6);
  });

  it("drift - a second application with other settings fails and changes nothing", async () => {
    const a = fx.sync();
    const b = fx.sync({ namespace: a.namespace });
    const decl = { id: "inventory.events", owner: "inventory-service", retention: { maxAgeMs: 3600_000, maxBytes: 8 * MiB } };
    await a.topic(decl).publish({ data: 1 });
    // Same declaration from another application: fine.
    expect(await collect(b.topic(decl).replay())).toHaveLength(1);
    const other = b.topic({ ...decl, owner: "someone-else", retention: { maxAgeMs: 3600_000, maxBytes: 16 * MiB }, maxPayloadBytes: 64 * KiB });
    const err = await failure(other.publish({ data: 2 }));
    expect(err).toBeInstanceOf(ResourceDriftError);
    expect(err.name).toBe("ResourceDriftError");
    expect(err.code).toBe("RESOURCE_DRIFT");
    expect((err as ResourceDriftError).fields.sort()).toEqual(["maxPayloadBytes", "owner", "retention.maxBytes"]);
    expect(await failure(other.replay())).toBeInstanceOf(ResourceDriftError);
    expect(await failure(other.head())).toBeInstanceOf(ResourceDriftError);
    const info = await fx.jsm.streams.info(`TMEV_${a.namespace}_inventory~events`);
    expect(info.config.max_bytes).toBe(8 * MiB);
    expect(JSON.parse(info.config.description!).owner).toBe("inventory-service");
    expect(info.state.messages).toBe(1);
    for (const field of [{ dedupeWindowMs: 1000 }, { replicas: 1, retention: { maxAgeMs: 7200_000, maxBytes: 8 * MiB } }]) {
      const e = await failure(b.topic({ ...decl, ...field }).head());
      expect(e).toBeInstanceOf(ResourceDriftError);
    }
  });

  it("listTopics - lists the namespace's topics on the broker, declared here or not", async () => {
    const a = fx.sync();
    const b = fx.sync({ namespace: a.namespace });
    const elsewhere = fx.sync();
    await a.topic({ id: "notebook.doc-1", owner: "notebook" }).publish({ data: { v: 1 } });
    await a.topic({ id: "notebook.doc-2", owner: "notebook" }).publish({ data: { v: 2 } });
    await a.topic({ id: "inventory.events" }).head();
    await elsewhere.topic({ id: "notebook.doc-9" }).head();
    const all = await b.listTopics();
    expect(all.map((t) => t.id)).toEqual(["inventory.events", "notebook.doc-1", "notebook.doc-2"]);
    const docs = await b.listTopics({ idPrefix: "notebook." });
    expect(docs.map((t) => t.id)).toEqual(["notebook.doc-1", "notebook.doc-2"]);
    expect(docs[0]).toMatchObject({ owner: "notebook", events: 1, firstSequence: 1, lastSequence: 1, deadLetters: 0 });
    expect(docs[0]!.bytes).toBeGreaterThan(0);
  });

  it("destroy - deletes both streams without provisioning them", async () => {
    const a = fx.sync();
    const names = (await fx.jsm.streams.names().next()).filter((n) => n.includes(`_${a.namespace}_`));
    expect(names).toEqual([]);
    await a.topic({ id: "never.used" }).destroy(); // nothing to delete, nothing created
    const t = a.topic({ id: "retired" });
    await t.publish({ data: 1 });
    expect((await a.listTopics()).map((x) => x.id)).toEqual(["retired"]);
    await t.destroy();
    const after = (await fx.jsm.streams.names().next()).filter((n) => n.includes(`_${a.namespace}_`));
    expect(after).toEqual([]);
    expect(await a.listTopics()).toEqual([]);
  });

  it("dead-letter limit - applied before first use; kept while the stream holds more, failing every use", async () => {
    const s = fx.sync();
    const base = { id: "jobs", maxPayloadBytes: 8 * KiB, retention: { maxBytes: 1 * MiB } };
    await s.topic({ ...base, deadLetterRetention: { maxBytes: 256 * KiB } }).head();
    const dlq = `TMDL_${s.namespace}_jobs`;
    expect((await fx.jsm.streams.info(dlq)).config.max_bytes).toBe(256 * KiB);

    // A raised limit is applied by the next declaration, before its first use.
    const raised = fx.sync({ namespace: s.namespace }).topic({ ...base, deadLetterRetention: { maxBytes: 512 * KiB } });
    await raised.head();
    expect((await fx.jsm.streams.info(dlq)).config.max_bytes).toBe(512 * KiB);

    // Fill the dead-letter stream with ~100 KiB (as failed deliveries would).
    const js = jetstream(fx.nc);
    for (let i = 0; i < 20; i++) await js.publish(`tmdl.${s.namespace}.jobs.search-index`, new Uint8Array(5 * KiB));
    const held = (await fx.jsm.streams.info(dlq)).state.bytes;
    expect(held).toBeGreaterThan(64 * KiB);

    // Lowered below what it holds: the old limit stays and every use fails.
    const lowered = fx.sync({ namespace: s.namespace }).topic({ ...base, deadLetterRetention: { maxBytes: 64 * KiB } });
    for (const use of [() => lowered.head(), () => lowered.publish({ data: 1 }), () => lowered.latestCursor()]) {
      const err = await failure(use());
      expect(err).toBeInstanceOf(ResourceDriftError);
      expect((err as ResourceDriftError).fields).toEqual(["deadLetterRetention.maxBytes"]);
    }
    expect(await failure(lowered.replay())).toBeInstanceOf(ResourceDriftError);
    expect((await fx.jsm.streams.info(dlq)).config.max_bytes).toBe(512 * KiB);

    // Once it holds less, the next use applies the lower limit and works.
    await fx.jsm.streams.purge(dlq);
    await lowered.publish({ data: 1 });
    expect((await fx.jsm.streams.info(dlq)).config.max_bytes).toBe(64 * KiB);
  });
});
