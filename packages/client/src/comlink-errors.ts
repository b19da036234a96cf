/**
 * comlink's default throw handler sends only `message`, `name` and `stack`, so a Tidemark error
 * loses its `code` on the way from the worker to the tab. This one sends the error payload of
 * `@tidemark/shared` and rebuilds the error class on the other side.
 */
import { transferHandlers, type TransferHandler } from "comlink";
import { fromErrorPayload, toErrorPayload, type ErrorPayload } from "@tidemark/shared";

interface Thrown {
  payload: ErrorPayload;
  stack?: string;
}

const marker = Symbol.for("tidemark.comlink.throw");

/** @internal Replaces comlink's "throw" handler; call it in the worker and in every tab. */
export function keepErrorCodes(): void {
  const base = transferHandlers.get("throw") as (TransferHandler<unknown, unknown> & { [marker]?: true }) | undefined;
  if (!base || base[marker]) return;
  const handler: TransferHandler<{ value: unknown }, Thrown> & { [marker]: true } = {
    [marker]: true,
    canHandle: (value): value is { value: unknown } => base.canHandle(value),
    serialize({ value }) {
      const stack = value instanceof Error ? value.stack : undefined;
      return [{ payload: toErrorPayload(value), ...(stack ? { stack } : {}) }, []];
    },
    deserialize({ payload, stack }) {
      const error = fromErrorPayload(payload);
      if (stack) error.stack = stack;
      throw error;
    },
  };
  transferHandlers.set("throw", handler as TransferHandler<unknown, unknown>);
}
