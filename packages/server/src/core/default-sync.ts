/**
 * The process default Sync of one entry point: `configureSync()` sets it, `getDefaultSync()`
 * returns it (made from the entry's defaults when none was set), and `lazySync()` binds
 * declarations to it. Each entry point makes its own with {@link processDefault}, so the Node
 * and the edge entry never share one.
 */
import type { SyncOptions } from "./sync.js";
import type { Sync } from "./types.js";

/** The three functions an entry point exports for its process default. */
export interface ProcessDefault {
  /** Sets the process default Sync (from options, or one you made). Returns it. */
  configureSync(options?: SyncOptions | Sync): Sync;
  /** The process default Sync: the configured one, else one made from the entry's defaults. */
  getDefaultSync(): Sync;
  /**
   * Binds a declaration to the process default Sync: the function runs once per Sync, on first
   * call, so a module can declare its topics at import time without connecting.
   * @example const events = lazySync((sync) => sync.topic({ id: "inventory.events" }));
   *          await events().publish({ data });
   */
  lazySync<R>(declare: (sync: Sync) => R): () => R;
}

function isSync(v: SyncOptions | Sync): v is Sync {
  return typeof (v as Sync).topic === "function" && typeof (v as Sync).close === "function";
}

/**
 * @internal The default slot of one entry point. `create` makes a Sync on the entry's platform;
 * `defaults` gives the options of the default when `configureSync()` was not called (it may
 * throw where there are none, as on edge runtimes).
 */
export function processDefault(create: (options: SyncOptions) => Sync, defaults: () => SyncOptions): ProcessDefault {
  let current: Sync | undefined;
  const getDefaultSync = (): Sync => (current ??= create(defaults()));
  return {
    configureSync: (options = {}) => (current = isSync(options) ? options : create(options)),
    getDefaultSync,
    lazySync: <R>(declare: (sync: Sync) => R) => {
      const cache = new WeakMap<Sync, R>();
      return () => {
        const sync = getDefaultSync();
        if (!cache.has(sync)) cache.set(sync, declare(sync));
        return cache.get(sync)!;
      };
    },
  };
}
