import { expose, wrap } from "comlink";
import { ErrorCode, RetentionGapError, TidemarkError } from "@tidemark/shared";
import { afterAll, describe, expect, it } from "vitest";
import { keepErrorCodes } from "./comlink-errors.js";

// A real MessageChannel between the two ends, as between a tab and the SharedWorker.
const channel = new MessageChannel();
keepErrorCodes();
expose(
  {
    refuse(): never {
      throw new TidemarkError(ErrorCode.Forbidden, "tenant initech is not yours");
    },
    gap(): never {
      throw new RetentionGapError("expired", { requestedSequence: 3, firstAvailableSequence: 40 });
    },
    plain(): never {
      throw new TypeError("boom");
    },
  },
  channel.port1 as never,
);
const remote = wrap<{ refuse(): void; gap(): void; plain(): void }>(channel.port2 as never);
afterAll(() => {
  channel.port1.close();
  channel.port2.close();
});

describe("comlink errors", () => {
  it("comlink errors - a Tidemark error keeps its code across the boundary", async () => {
    const error = await remote.refuse().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TidemarkError);
    expect(error).toMatchObject({ code: "FORBIDDEN", message: "tenant initech is not yours" });
  });

  it("comlink errors - the error class and its details are rebuilt", async () => {
    const error = await remote.gap().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RetentionGapError);
    expect(error).toMatchObject({ code: "RETENTION_GAP", requestedSequence: 3, firstAvailableSequence: 40 });
  });

  it("comlink errors - other errors arrive as INTERNAL with their message", async () => {
    const error = await remote.plain().catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "INTERNAL", message: "boom" });
  });

  it("comlink errors - registering twice is harmless", async () => {
    keepErrorCodes();
    await expect(remote.refuse()).rejects.toMatchObject({ code: "FORBIDDEN" });
  });
});
