/**
 * @internal The states of a connection, as one tagged union. A connection changes state only
 * in `Session`'s `setState` (session.ts), which refuses the transitions this table does not list.
 *
 * ```
 * new ──hello──> open ──token expired──> expired ──refresh──> open
 *  │              │ └──refresh/reauthenticate──> open (new principal)     │
 *  └──────────────┴───────── close (any reason) ──> closed <──────────────┘
 * ```
 */
export type ConnectionState<P> =
  /** Waiting for `hello` until `deadline` (ms). */
  | { readonly kind: "new"; readonly deadline: number }
  /** Authenticated as `principal`, whose token expires at `expiresAt` (ms), if it does. */
  | { readonly kind: "open"; readonly principal: P; readonly expiresAt: number | undefined }
  /** The token expired and every subscription ended: a `refresh` must come before `deadline`. */
  | { readonly kind: "expired"; readonly deadline: number }
  /** The socket closed; terminal. */
  | { readonly kind: "closed" };

export type StateKind = ConnectionState<unknown>["kind"];

const NEXT: Record<StateKind, readonly StateKind[]> = {
  new: ["open", "closed"],
  open: ["open", "expired", "closed"],
  expired: ["open", "closed"],
  closed: [],
};

/** Whether a connection may go from `from` to `to`. */
export function canMove(from: StateKind, to: StateKind): boolean {
  return NEXT[from].includes(to);
}
