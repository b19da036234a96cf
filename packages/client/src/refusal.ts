/**
 * Which closes of the socket are final refusals: the ones a retry cannot get past, reported
 * as the `failed` status with an error (like Ably's `failed` state) instead of an `offline`
 * that retries forever without a word. Everything else is retried with the backoff.
 */
import { CloseCode, ErrorCode, type ErrorPayload } from "@tidemark/shared";

/** @internal A close of the socket, and how many closes in a row refused a token. */
export interface Close {
  code: number;
  reason: string;
  /** 4401 closes since the last `welcome`, this one included. */
  tokenRefusals: number;
  /** The page's origin, named in the error. */
  origin?: string;
}

/**
 * @internal The error of a final refusal, or undefined when the close is retried.
 * - 4403: the bridge refused the page's Origin; the same page gets the same answer.
 * - 4401 twice in a row: the first refusal is retried with a fresh token from `getToken` (an
 *   expired token, a rotated key); a fresh one refused too will not do better.
 */
export function finalRefusal(close: Close): ErrorPayload | undefined {
  const reason = close.reason || `close ${close.code}`;
  if (close.code === CloseCode.OriginRefused) {
    const page = close.origin ? ` ${close.origin}` : "";
    return {
      code: ErrorCode.OriginRefused,
      name: "OriginRefusedError",
      message: `the bridge refused this page's origin${page} (${reason}): add it to the bridge's \`origins\` option`,
    };
  }
  if (close.code === CloseCode.Unauthorized && close.tokenRefusals >= 2) {
    return {
      code: ErrorCode.Unauthorized,
      name: "UnauthorizedError",
      message: `the bridge refused the token, and a fresh one from getToken too (${reason})`,
    };
  }
  return undefined;
}
