import { describe, it, expect } from "vitest";
import { brokerLine, redactServer } from "./broker-log.js";

describe("broker log line", () => {
  it("broker-log - credentials in a server URL are masked, the rest kept", () => {
    expect(redactServer("nats://alice:s3cret@10.0.0.1:4222")).toBe("nats://alice:***@10.0.0.1:4222");
    expect(redactServer("tls://tok3n@nats.example:4222")).toBe("tls://***@nats.example:4222");
    expect(redactServer("bob:pw@127.0.0.1:4222")).toBe("bob:***@127.0.0.1:4222");
    expect(redactServer("nats://127.0.0.1:4222")).toBe("nats://127.0.0.1:4222");
    expect(redactServer("wss://nats.example/path@x")).toBe("wss://nats.example/path@x");
  });

  it("broker-log - the line names the external servers and what chose them, or the embedded data dir", () => {
    const ext = brokerLine("app", "TIDEMARK_NATS_URL", { kind: "external", servers: ["nats://u:p@a:4222", "nats://b:4222"], version: "2.10.1" });
    expect(ext.msg).toBe('tidemark: namespace "app" uses NATS at nats://u:***@a:4222, nats://b:4222 (from TIDEMARK_NATS_URL), server 2.10.1');
    expect(ext.fields).toMatchObject({ broker: "external", from: "TIDEMARK_NATS_URL", servers: ["nats://u:***@a:4222", "nats://b:4222"] });
    const emb = brokerLine("app", "default", { kind: "embedded", url: "nats://127.0.0.1:5000", dataDir: "/srv/.tidemark", version: "2.15.1" });
    expect(emb.msg).toContain("embedded nats-server 2.15.1 at nats://127.0.0.1:5000, data dir /srv/.tidemark");
    expect(emb.msg).toContain("TIDEMARK_NATS_URL");
    expect(emb.fields).toMatchObject({ broker: "embedded", from: "default", dataDir: "/srv/.tidemark" });
  });
});
