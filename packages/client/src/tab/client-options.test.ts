import { describe, expect, it } from "vitest";
import { ErrorCode, InvalidArgumentError } from "@tidemark/shared";
import { createClient, type ClientOptions } from "./client.js";

/** What createClient threw for these options (the checks run before anything touches the browser). */
function refusal(options: unknown): unknown {
  try {
    createClient(options as ClientOptions);
  } catch (err) {
    return err;
  }
  throw new Error("createClient accepted the options");
}

describe("client options", () => {
  it("client - createClient refuses a missing url and a bad historyLimit with InvalidArgumentError, naming the field", () => {
    for (const [options, field] of [
      [undefined, "url"],
      [{}, "url"],
      [{ url: "" }, "url"],
      [{ url: "/ws", historyLimit: 0 }, "historyLimit"],
      [{ url: "/ws", historyLimit: 1.5 }, "historyLimit"],
    ] as const) {
      const err = refusal(options);
      expect(err, JSON.stringify(options)).toBeInstanceOf(InvalidArgumentError);
      expect(err).toMatchObject({ code: ErrorCode.InvalidArgument, message: expect.stringContaining(`\`${field}\``) as unknown });
    }
  });
});
