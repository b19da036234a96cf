/**
 * `brokerNames()` is what Tidemark really creates: a topic with a tenant event, a live reader
 * and a process() consumer leave exactly the listed streams, subjects and durables on the broker.
 */
import { describe, expect, it } from "vitest";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { createSync } from "../../src/index.js";
import { brokerNames } from "../../src/internal.js";
import { startTestNats, uniqueNamespace } from "@tidemark/testing";

describe("broker names", () => {
  it("broker names - the streams, subjects and durables listed are the ones on the broker", async () => {
    await using nats = await startTestNats();
    const namespace = uniqueNamespace();
    const sync = createSync({ namespace, nats: { servers: nats.url } });
    const nc = await connect({ servers: nats.url });
    try {
      const names = brokerNames({ namespace, topic: "orders.placed", tenantId: "acme", consumer: "mailer", checkpoint: "digest" });
      const topic = sync.topic<number>({ id: "orders.placed" });
      // A live reader sees the republished event on the live subject.
      const live = nc.subscribe(names.liveSubject, { max: 1 });
      await nc.flush();
      const worker = await topic.process({ consumer: "mailer", start: "earliest", delivery: { maxAttempts: 1, backoffMs: [] } }, () => undefined);
      await topic.publish({ data: 1, tenantId: "acme" });
      for await (const m of live) expect(m.subject).toBe(names.liveSubject);
      await worker.stop();

      const jsm = await jetstreamManager(nc);
      const streams: string[] = [];
      for await (const s of jsm.streams.list()) if (s.config.name.includes(namespace)) streams.push(s.config.name);
      expect(streams.sort()).toEqual([names.deadLetterStream, names.eventStream].sort());
      const events = await jsm.streams.info(names.eventStream, { subjects_filter: ">" });
      expect(events.config.subjects).toEqual([names.eventStreamSubjects]);
      expect(events.config.republish).toMatchObject(names.liveRepublish);
      expect(Object.keys(events.state.subjects ?? {})).toEqual([names.eventSubject]);
      const deadLetters = await jsm.streams.info(names.deadLetterStream);
      expect(deadLetters.config.subjects).toEqual([names.deadLetterStreamSubjects]);
      for (const stream of [names.eventStream, names.deadLetterStream]) {
        const durables: string[] = [];
        for await (const c of jsm.consumers.list(stream)) durables.push(c.name);
        expect(durables).toEqual([names.durable]);
      }
      const redrive = await jsm.consumers.info(names.deadLetterStream, names.durable);
      expect(redrive.config.filter_subject ?? redrive.config.filter_subjects?.[0]).toBe(names.redriveSubject);
    } finally {
      await nc.close();
      await sync.close();
    }
  });
});
