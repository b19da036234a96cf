import { createElement as h } from "react";
import { renderToString } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "@tidemark/client";
import { TidemarkProvider } from "./index.js";

describe("provider", () => {
  it("provider - refuses neither `client` nor `options` with InvalidArgumentError", () => {
    let thrown: unknown;
    try {
      // A JavaScript caller (or a cast) can leave out both props; the type asks for children.
      renderToString(h(TidemarkProvider, {} as Parameters<typeof TidemarkProvider>[0]));
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toMatchObject({ name: "InvalidArgumentError", code: "INVALID_ARGUMENT", message: "TidemarkProvider: pass `client` or `options`" });
    expect(thrown).toBeInstanceOf(InvalidArgumentError);
  });
});
