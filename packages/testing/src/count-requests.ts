/**
 * Counts the `Request` objects built while it is in use, by swapping the global class for a
 * counting subclass (so `instanceof Request` still holds); disposing puts the original back.
 */
export function countRequests(): { readonly built: number } & Disposable {
  const Original = globalThis.Request;
  let built = 0;
  globalThis.Request = class extends Original {
    constructor(...args: ConstructorParameters<typeof Request>) {
      super(...args);
      built++;
    }
  };
  return {
    get built() {
      return built;
    },
    [Symbol.dispose]() {
      globalThis.Request = Original;
    },
  };
}
