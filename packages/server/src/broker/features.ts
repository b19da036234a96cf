/**
 * What the connected nats-server can do, from the version it reports (`nc.info.version`).
 * 2.9 is the floor; newer servers add what the core uses when present. In a cluster the version
 * is that of the node the connection reached: upgrade every node before relying on it. In
 * broker/ because both the core (the connection) and embedded/ (durability) read it.
 */

export interface ServerFeatures {
  /** e.g. "2.15.1" */
  readonly version: string;
  /** 2.10: stream and consumer `metadata` (the declaration is recorded there too). */
  readonly metadata: boolean;
  /** 2.10: `sync_interval: always` (fsync before every acknowledgement). */
  readonly syncAlways: boolean;
  /** 2.10: several `filter_subjects` on one consumer. */
  readonly multiFilter: boolean;
  /** 2.11: batched direct get (`multi_last`/`batch` on the direct get API). */
  readonly batchDirectGet: boolean;
}

/** Parses "2.10.23", "v2.11.0-RC.1" into [major, minor, patch]; unknown parts are 0. */
export function parseVersion(version: string): [number, number, number] {
  const m = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?/.exec(version.trim());
  return m ? [Number(m[1]), Number(m[2] ?? 0), Number(m[3] ?? 0)] : [0, 0, 0];
}

/** True when `version` is at least `major.minor.patch`. */
export function versionAtLeast(version: string, major: number, minor: number, patch = 0): boolean {
  const [a, b, c] = parseVersion(version);
  return a !== major ? a > major : b !== minor ? b > minor : c >= patch;
}

export function featuresOf(version: string): ServerFeatures {
  const v210 = versionAtLeast(version, 2, 10);
  return {
    version,
    metadata: v210,
    syncAlways: v210,
    multiFilter: v210,
    batchDirectGet: versionAtLeast(version, 2, 11),
  };
}
