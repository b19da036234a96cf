/** Reads of nats-server's HTTP monitoring endpoints (/jsz, /connz, /varz) for the benchmarks. */

/** The JSON of `path` (with its query) on the monitoring endpoint at `monitorUrl`. */
export async function monitorJson<T>(monitorUrl: string | undefined, path: string): Promise<T> {
  return (await (await fetch(new URL(path, monitorUrl))).json()) as T;
}

/** JetStream consumers on the streams of `namespace` (Tidemark's stream names carry `_<namespace>_`). */
export async function namespaceConsumers(monitorUrl: string | undefined, namespace: string): Promise<number> {
  const jsz = await monitorJson<{ account_details?: { stream_detail?: { name: string; consumer_detail?: unknown[] }[] }[] }>(
    monitorUrl,
    "/jsz?accounts=true&streams=true&consumers=true",
  );
  let n = 0;
  for (const a of jsz.account_details ?? []) for (const s of a.stream_detail ?? []) if (s.name.includes(`_${namespace}_`)) n += s.consumer_detail?.length ?? 0;
  return n;
}
