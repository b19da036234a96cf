import { describe, expect, it } from "vitest";
import type { ClientState } from "@tidemark/client";
import { ClientSource } from "./client-source.js";
import { INITIAL_CONNECTION } from "./connection-store.js";
import { FakeClient } from "../test/fake-client.js";

describe("connection store", () => {
  it("connection store - a failed connection shows `failed` and its error; recovering clears the error", () => {
    const fake = new FakeClient();
    const store = new ClientSource(() => fake, true).connection;
    let renders = 0;
    const off = store.subscribe(() => renders++);
    expect(store.getSnapshot()).toEqual({ status: "connecting", tabs: 1, error: undefined });
    // What the client builds from the engine's report (an OriginRefusedError, by code).
    const error = Object.assign(new Error("the bridge refused this page's origin (origin not allowed)"), { name: "OriginRefusedError", code: "ORIGIN_REFUSED" }) as ClientState["error"];
    fake.setState({ status: "failed", error });
    expect(store.getSnapshot()).toEqual({ status: "failed", tabs: 1, error });
    const failed = store.getSnapshot();
    fake.setState({ status: "failed", error }); // the same state again: the same snapshot
    expect(store.getSnapshot()).toBe(failed);
    fake.setState({ status: "connecting", error: undefined });
    expect(store.getSnapshot()).toEqual({ status: "connecting", tabs: 1, error: undefined });
    expect(renders).toBe(3); // the first report (tabs: 1), failed, recovered: not the repeat
    off();
    expect(INITIAL_CONNECTION.error).toBeUndefined();
  });
});
