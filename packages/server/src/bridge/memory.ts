/**
 * The process's memory, for `/metrics`: resident set and V8 heap, under the names Prometheus'
 * Node.js client uses, so existing dashboards read them. Undefined where the runtime has no
 * `process.memoryUsage` (a runtime without Node compatibility).
 */
export interface ProcessMemory {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
}

export function processMemory(): ProcessMemory | undefined {
  const usage = (globalThis as { process?: { memoryUsage?: () => ProcessMemory } }).process?.memoryUsage;
  if (typeof usage !== "function") return undefined;
  const { rss, heapUsed, heapTotal, external } = usage();
  return { rss, heapUsed, heapTotal, external };
}
