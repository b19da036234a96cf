import { describe, it, expect } from "vitest";
import { BrokerUnavailableError, fromErrorPayload, toErrorPayload } from "@tidemark/shared";
import { errors as natsErrors } from "@nats-io/nats-core";
import { jserrors } from "@nats-io/jetstream/internal";

const { JetStreamNotEnabled } = jserrors;
import { JetStreamApiError } from "@nats-io/jetstream";
import {
  isConsumerNotFound,
  isDirectGetEmpty,
  isNoMessageFound,
  isStorageRefused,
  isStreamNameInUse,
  isStreamNotFound,
  isTransient,
  isWrongLastSequence,
  JsCode,
  mapNatsError,
} from "./errors.js";

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

  it("errors - a message id still being proposed (10158, after a partition) is retried with the same id, not an InternalError", () => {
    const inProcess = new JetStreamApiError({ err_code: 10158, code: 409, description: "duplicate message id is in process" });
    expect(isTransient(inProcess)).toBe(true);
    expect(mapNatsError(inProcess, "publish")).toBeInstanceOf(BrokerUnavailableError);
    expect(isTransient(new JetStreamApiError({ err_code: 10071, code: 400, description: "wrong last sequence" }))).toBe(false);
  });

  it("errors - a leader's 'store is closed' (10077, its stream stopped after the commit) is retried; the stream's limits (10077 too) are not", () => {
    expect(isTransient(new JetStreamApiError({ err_code: 10077, code: 503, description: "store is closed" }))).toBe(true);
    expect(isTransient(new JetStreamApiError({ err_code: 10077, code: 503, description: "maximum bytes exceeded" }))).toBe(false);
    expect(isTransient(new JetStreamApiError({ err_code: 10077, code: 503, description: "message too large" }))).toBe(false);
  });

  it("errors - maybeStored survives a trip across a boundary", () => {
    const e = new BrokerUnavailableError("gone", { maybeStored: true });
    expect(e.maybeStored).toBe(true);
    expect(new BrokerUnavailableError("gone").maybeStored).toBe(false);
    expect(fromErrorPayload(structuredClone(toErrorPayload(e)))).toMatchObject({ maybeStored: true, name: "BrokerUnavailableError" });
  });

  it("errors - each JetStream answer Tidemark reacts to has one predicate, by its API error code", () => {
    const api = (err_code: number, description = "x") => new JetStreamApiError({ err_code, code: 404, description });
    const cases: [(err: unknown) => boolean, number][] = [
      [isStreamNotFound, 10059],
      [isConsumerNotFound, 10014],
      [isNoMessageFound, 10037],
      [isStreamNameInUse, 10058],
      [isWrongLastSequence, 10071],
      [isStorageRefused, 10023],
      [isStorageRefused, 10047],
    ];
    for (const [predicate, code] of cases) {
      expect(predicate(api(code)), `${predicate.name} ${code}`).toBe(true);
      expect(predicate(api(1)), `${predicate.name} on another code`).toBe(false);
      expect(predicate(new Error(String(code))), `${predicate.name} on a plain error`).toBe(false);
    }
    // nats-server 2.9 may answer an over-reservation with another code; its words say what it is.
    expect(isStorageRefused(api(10999, "insufficient resources"))).toBe(true);
    expect(isDirectGetEmpty(Object.assign(new Error("x"), { code: 404 }))).toBe(true);
    expect(isDirectGetEmpty(new Error("message not found"))).toBe(true);
    expect(isDirectGetEmpty(new Error("timeout"))).toBe(false);
    expect(Object.values(JsCode)).toEqual(expect.arrayContaining([10059, 10014, 10037, 10058, 10071, 10023, 10047]));
  });
});
