import { describe, expect, it } from "vitest";
import { brokerNames, durableName } from "./broker-names.js";

describe("broker names", () => {
  it("broker names - what Tidemark creates on the broker for one topic, tenant and consumer", () => {
    expect(brokerNames({ namespace: "app", topic: "inventory.events", tenantId: "acme", consumer: "search-index", checkpoint: "mailer-digest" })).toMatchInlineSnapshot(`
      {
        "checkpointBucket": "TMCP_app",
        "checkpointKey": "inventory/events.mailer-digest.acme",
        "checkpointStream": "KV_TMCP_app",
        "claimSubject": "tmdl.app.inventory~events.search-index.declare",
        "deadLetterStream": "TMDL_app_inventory~events",
        "deadLetterStreamSubjects": "tmdl.app.inventory~events.>",
        "deadLetterSubject": "tmdl.app.inventory~events.search-index",
        "durable": "app_inventory~events_search-index",
        "eventStream": "TMEV_app_inventory~events",
        "eventStreamSubjects": "tm.app.inventory~events.>",
        "eventSubject": "tm.app.inventory~events.acme",
        "liveRepublish": {
          "dest": "tmlive.app.inventory~events.>",
          "src": "tm.app.inventory~events.>",
        },
        "liveSubject": "tmlive.app.inventory~events.acme",
        "readerConsumer": "tmr_<nuid>_1",
        "redriveSubject": "tmdl.app.inventory~events.search-index.redrive",
      }
    `);
  });

  it("broker names - events without a tenant", () => {
    expect(brokerNames({ namespace: "app", topic: "jobs", tenantId: undefined, consumer: "mailer", checkpoint: "digest" })).toMatchInlineSnapshot(`
      {
        "checkpointBucket": "TMCP_app",
        "checkpointKey": "jobs.digest._",
        "checkpointStream": "KV_TMCP_app",
        "claimSubject": "tmdl.app.jobs.mailer.declare",
        "deadLetterStream": "TMDL_app_jobs",
        "deadLetterStreamSubjects": "tmdl.app.jobs.>",
        "deadLetterSubject": "tmdl.app.jobs.mailer",
        "durable": "app_jobs_mailer",
        "eventStream": "TMEV_app_jobs",
        "eventStreamSubjects": "tm.app.jobs.>",
        "eventSubject": "tm.app.jobs._",
        "liveRepublish": {
          "dest": "tmlive.app.jobs.>",
          "src": "tm.app.jobs.>",
        },
        "liveSubject": "tmlive.app.jobs.>",
        "readerConsumer": "tmr_<nuid>_1",
        "redriveSubject": "tmdl.app.jobs.mailer.redrive",
      }
    `);
  });

  it("broker names - durable names join namespace, topic token and consumer into a valid JetStream name", () => {
    const name = durableName("app", "inventory.events", "search-index");
    expect(name).toBe("app_inventory~events_search-index");
    expect(name).not.toMatch(/[.*>\s]/);
  });
});
