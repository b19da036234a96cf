/**
 * Every error the core throws is its code's class (README: "every error is a class"), so
 * `instanceof` works in the process and `code` across a boundary.
 */
import { describe, expect, it } from "vitest";
import { ClosedError, ErrorCode, InvalidArgumentError } from "../../src/index.js";
import { createSync } from "../../src/index.js";
import { createSync as createEdgeSync } from "../../src/edge/index.js";
import { startTestNats, uniqueNamespace } from "@tidemark/testing";

describe("typed errors", () => {
  it("typed errors - a closed Sync rejects with ClosedError", async () => {
    await using nats = await startTestNats();
    const sync = createSync({ namespace: uniqueNamespace(), nats: { servers: nats.url } });
    await sync.topic({ id: "closed" }).publish({ data: 1 });
    await sync.close();
    const err = await sync.ready().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClosedError);
    expect(err).toMatchObject({ name: "ClosedError", code: ErrorCode.Closed });
  });

  it("typed errors - bad NATS options are InvalidArgumentError on both entries", async () => {
    const sync = createSync({ namespace: uniqueNamespace(), nats: { servers: [] } });
    await expect(sync.ready()).rejects.toBeInstanceOf(InvalidArgumentError);
    await sync.close();
    expect(() => createEdgeSync({} as never)).toThrow(InvalidArgumentError);
  });
});
