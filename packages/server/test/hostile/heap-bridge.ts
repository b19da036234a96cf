/**
 * The bridge process of heap.test.ts and the payload shapes it publishes. Run as a child:
 *   node --conditions=@tidemark/source --import tsx heap-bridge.ts <nats url> <namespace>
 * It serves one topic per shape with small hub bounds and prints its port.
 */
import { fileURLToPath } from "node:url";
import { createNodeBridge, createSync, serveBridge } from "../../src/index.js";

/**
 * The hub bounds the child runs with: small, so that a few hubs fill them (the figures with the
 * defaults: TIDEMARK_HEAP_RING_BYTES=1048576 TIDEMARK_HEAP_BACKLOG_BYTES=8388608).
 */
export const HUB_LIMITS = {
  ringBytes: Number(process.env.TIDEMARK_HEAP_RING_BYTES ?? 256 * 1024),
  feedBacklogBytes: Number(process.env.TIDEMARK_HEAP_BACKLOG_BYTES ?? 1024 * 1024),
};
/** JSON length of every payload. */
export const PAYLOAD_CHARS = 4_000;

/**
 * Payloads of about `PAYLOAD_CHARS` of JSON each; `n` makes keys and strings unique per event
 * (what an attacker would do: nothing is shared between events).
 */
export const SHAPES: Record<string, (n: number) => unknown> = {
  plainString: () => "x".repeat(PAYLOAD_CHARS - 2),
  emptyObjects: () => Array.from({ length: PAYLOAD_CHARS / 3 }, () => ({})),
  deepNesting: () => {
    let v: unknown[] = [];
    for (let i = 1; i < PAYLOAD_CHARS / 2; i++) v = [v];
    return v;
  },
  manySmallKeys: (n) => Array.from({ length: PAYLOAD_CHARS / 12 }, (_, i) => ({ [(n * 1000 + i).toString(36)]: 0 })),
  manySmallNumbers: () => ["", ...Array.from({ length: PAYLOAD_CHARS / 4 }, (_, i) => 0.5 + (i % 9))],
  shortStrings: (n) => Array.from({ length: PAYLOAD_CHARS / 7 }, (_, i) => (n * 1000 + i).toString(36)),
};

export function topicOptions(shape: string) {
  return { id: `heap.${shape.toLowerCase()}`, retention: { maxBytes: 64 * 1024 * 1024 } };
}

async function child(natsUrl: string, namespace: string): Promise<void> {
  const sync = createSync({ namespace, nats: { servers: natsUrl }, hubs: HUB_LIMITS });
  const bridge = createNodeBridge({
    sync,
    // Tokens are "<principal>@<tenant>": a principal reads its own tenant.
    topics: Object.keys(SHAPES).map((shape) => ({ topic: sync.topic(topicOptions(shape)), authorize: (p: { tenant: string }, r: { tenantId?: string }) => r.tenantId === p.tenant })),
    authenticate: (token: string) => {
      const at = token.indexOf("@");
      return at > 0 ? { id: token, tenant: token.slice(at + 1) } : null;
    },
    logger: () => undefined,
    limits: { maxConnectionsPerPrincipal: 1_000 },
  });
  const server = await serveBridge(bridge, { port: 0 });
  process.stdout.write(`port ${server.port}\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await child(process.argv[2]!, process.argv[3]!);
