import { describe, it, expect } from "vitest";
import { runtimeOf, durableName } from "../../src/internal.js";
import { useProcessFixture } from "./fixture.js";

const fx = useProcessFixture();

describe("process - sync.close()", () => {
  it("process - closing the Sync stops its workers and waits for in-flight handlers, which ack", async () => {
    const sync = fx.sync();
    const topic = fx.topic<number>({}, sync);
    await topic.publish({ data: 1 });
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    let finished = false;
    await topic.process({ consumer: "mailer", start: "earliest", delivery: { maxAttempts: 3, backoffMs: [100] } }, async () => {
      started();
      await new Promise((r) => setTimeout(r, 500));
      finished = true;
    });
    await running;
    await sync.close();
    expect(finished).toBe(true);
    const rt = runtimeOf(topic);
    const info = await fx.jsm.consumers.info(rt.streamName, durableName(rt.namespace, topic.id, "mailer"));
    expect(info.num_ack_pending).toBe(0);
    expect(info.num_pending).toBe(0);
    expect(info.ack_floor.stream_seq).toBe(1);
  });
});
