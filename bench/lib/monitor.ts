/** Reads of nats-server's HTTP monitoring endpoints (/jsz, /connz, /varz) for the benchmarks. */

/** The JSON of `path` (with its query) on the monitoring endpoint at `monitorUrl`. */
export async function monitorJson<T>(monitorUrl: string | undefined, path: string): Promise<T> {
  return (await (await fetch(new URL(path, monitorUrl), { signal: AbortSignal.timeout(5_000) })).json()) as T;
}

/**
 * JetStream consumers on the streams of `namespace` (Tidemark's stream names carry
 * `_<namespace>_`). A node's /jsz lists only the consumers it holds (an ordered consumer lives on
 * one node of a cluster), so pass every node's endpoint: a consumer is counted once by stream and name.
 */
export async function namespaceConsumers(monitorUrls: string | undefined | (string | undefined)[], namespace: string): Promise<number> {
  const seen = new Set<string>();
  for (const url of Array.isArray(monitorUrls) ? monitorUrls : [monitorUrls]) {
    const jsz = await monitorJson<{ account_details?: { stream_detail?: { name: string; consumer_detail?: { name: string }[] }[] }[] }>(
      url,
      "/jsz?accounts=true&streams=true&consumers=true",
    );
    for (const a of jsz.account_details ?? []) {
      for (const s of a.stream_detail ?? []) {
        if (s.name.includes(`_${namespace}_`)) for (const c of s.consumer_detail ?? []) seen.add(`${s.name}/${c.name}`);
      }
    }
  }
  return seen.size;
}
