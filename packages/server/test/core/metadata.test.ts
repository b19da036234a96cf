/**
 * Where a topic's declaration lives: stream metadata on 2.10+, the description everywhere.
 * Runs on whatever server the harness found: the current one in the full suite, 2.9 in the
 * compatibility leg (TIDEMARK_NATS_SERVER=/usr/sbin/nats-server).
 */
import { describe, it, expect } from "vitest";
import { findNatsServer, natsServerVersion, ResourceDriftError } from "../../src/index.js";
import { resolveTopicOptions, eventStreamConfig, deadLetterStreamConfig, topicNames, featuresOf } from "../../src/internal.js";
import { collect, failure, useCoreFixture } from "./fixture.js";

const fx = useCoreFixture();

describe("declaration records", () => {
  it("harness - the suite's server is the one the embedded manager's lookup finds (TIDEMARK_NATS_SERVER, .tools/bin, PATH, /usr/sbin)", () => {
    expect(fx.nc.info!.version).toBe(natsServerVersion(findNatsServer()));
  });

  it("metadata - a new topic records its declaration in stream metadata on 2.10+, and in the description on every version", async () => {
    const s = fx.sync();
    await s.topic({ id: "meta.events", owner: "billing", maxPayloadBytes: 2048, retention: { maxBytes: 1024 ** 2 } }).publish({ data: 1 });
    const names = topicNames(s.namespace, "meta.events");
    const events = await fx.jsm.streams.info(names.stream);
    const dead = await fx.jsm.streams.info(names.deadLetterStream);
    const described = JSON.parse(events.config.description!) as { owner: string; incarnation: string };
    expect(described).toMatchObject({ owner: "billing", maxPayloadBytes: 2048, kind: "events" });
    if (featuresOf(fx.nc.info!.version).metadata) {
      expect(events.config.metadata).toMatchObject({
        "tidemark.version": "1",
        "tidemark.kind": "events",
        "tidemark.topic": "meta.events",
        "tidemark.owner": "billing",
        "tidemark.max_payload_bytes": "2048",
        "tidemark.incarnation": described.incarnation,
      });
      expect(dead.config.metadata).toMatchObject({ "tidemark.kind": "dead-letters", "tidemark.incarnation": described.incarnation });
    } else {
      expect(fx.nc.info!.version).toMatch(/^2\.9\./);
      expect(events.config.metadata ?? {}).not.toHaveProperty("tidemark.version");
    }
  });

  it("metadata - a topic made without metadata (on 2.9, or by an older release) is read from its description and checked for drift the same way", async () => {
    const s = fx.sync();
    const options = resolveTopicOptions({ id: "old.events", owner: "legacy", retention: { maxBytes: 1024 ** 2 } });
    const names = topicNames(s.namespace, "old.events");
    await fx.jsm.streams.add(eventStreamConfig(names, options, "0000000old", false));
    await fx.jsm.streams.add(deadLetterStreamConfig(names, options, "0000000old", false));

    const topic = s.topic({ id: "old.events", owner: "legacy", retention: { maxBytes: 1024 ** 2 } });
    const receipt = await topic.publish({ data: { n: 1 } });
    expect(topic.cursorSequence(receipt.cursor)).toBe(1);
    expect(await collect(topic.replay())).toHaveLength(1);
    expect((await s.listTopics({ idPrefix: "old." })).map((t) => [t.id, t.owner])).toEqual([["old.events", "legacy"]]);

    const drifted = s.topic({ id: "old.events", owner: "someone-else", maxPayloadBytes: 4096, retention: { maxBytes: 1024 ** 2 } });
    const err = await failure(drifted.head());
    expect(err).toBeInstanceOf(ResourceDriftError);
    expect((err as ResourceDriftError).fields.sort()).toEqual(["maxPayloadBytes", "owner"]);
  });

  it("metadata - drift on a topic made with metadata names the same fields as on one made without", async () => {
    const a = fx.sync();
    const decl = { id: "new.events", owner: "inventory", retention: { maxBytes: 1024 ** 2 } };
    await a.topic(decl).publish({ data: 1 });
    const b = fx.sync({ namespace: a.namespace });
    const err = await failure(b.topic({ ...decl, owner: "someone-else", maxPayloadBytes: 4096 }).head());
    expect(err).toBeInstanceOf(ResourceDriftError);
    expect((err as ResourceDriftError).fields.sort()).toEqual(["maxPayloadBytes", "owner"]);
  });
});
