/**
 * @internal Coalesces concurrent calls of an async read. Every caller gets a result of a call
 * that STARTED after its own call (a gap check must see the stream after the events it checks
 * arrived), but callers that arrive while a call is in flight share the next one: a hundred
 * tenant followers checking one topic cost at most two requests at a time, not a hundred.
 */
export function coalesceAfter<T>(fn: () => Promise<T>): () => Promise<T> {
  let inflight: Promise<T> | undefined;
  let next: Promise<T> | undefined;
  const start = (): Promise<T> => {
    next = undefined;
    const run = fn();
    inflight = run;
    const clear = () => {
      if (inflight === run) inflight = undefined;
    };
    run.then(clear, clear);
    return run;
  };
  return () => {
    if (next) return next;
    if (!inflight) return start();
    next = inflight.then(start, start);
    return next;
  };
}
