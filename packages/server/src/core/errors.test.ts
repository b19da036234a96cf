import { describe, it, expect } from "vitest";
import { BrokerUnavailableError, fromErrorPayload, toErrorPayload } from "@tidemark/shared";
import { errors as natsErrors } from "@nats-io/nats-core";
import { jserrors } from "@nats-io/jetstream/internal";

const { JetStreamNotEnabled } = jserrors;
import { isTransient, mapNatsError } from "./errors.js";

// What nats.js 3.4 throws for a publish nobody answers (e.g. a stream electing its leader).
const noResponders = () =>
  new JetStreamNotEnabled("jetstream is not enabled", {
    cause: new natsErrors.RequestError("no responders", { cause: new natsErrors.NoRespondersError("tm.x") }),
  });

describe("core errors", () => {
  it("errors - no responders wrapped in JetStreamNotEnabled is a transient BrokerUnavailableError", () => {
    const err = mapNatsError(noResponders(), "publish");
    expect(err).toBeInstanceOf(BrokerUnavailableError);
    expect(err).toMatchObject({ code: "BROKER_UNAVAILABLE", maybeStored: false });
    expect(isTransient(noResponders())).toBe(true);
    expect(isTransient(new natsErrors.TimeoutError())).toBe(true);
    expect(isTransient(new natsErrors.ClosedConnectionError())).toBe(false);
    // JetStream really not enabled (no responders at all on $JS.API) is a BrokerUnavailableError too.
    expect(mapNatsError(new JetStreamNotEnabled("jetstream is not enabled"))).toBeInstanceOf(BrokerUnavailableError);
  });

  it("errors - maybeStored survives a trip across a boundary", () => {
    const e = new BrokerUnavailableError("gone", { maybeStored: true });
    expect(e.maybeStored).toBe(true);
    expect(new BrokerUnavailableError("gone").maybeStored).toBe(false);
    expect(fromErrorPayload(structuredClone(toErrorPayload(e)))).toMatchObject({ maybeStored: true, name: "BrokerUnavailableError" });
  });
});
