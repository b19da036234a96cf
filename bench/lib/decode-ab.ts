/**
 * The payload decode alone, in one process: `decodeEvent` with the TextDecoder (main) and with
 * `utf8Text()` (the fast path), alternating, over envelopes shaped like the core bench's events
 * (each a view at an offset in a larger buffer, as nats.js hands payloads out); and the text
 * step alone (`TextDecoder.decode` vs `utf8Text()`). Prints the median CPU ns per event of each
 * side over `rounds` rounds.
 *
 *   tsx --conditions=@tidemark/source bench/lib/decode-ab.ts [rounds=15]
 */
import { cursorPrefix, encodeEnvelope } from "../../packages/shared/src/index.js";
import { decodeEvent } from "../../packages/server/src/core/decode-event.js";
import { utf8Text } from "../../packages/server/src/core/utf8-text.js";
import { median } from "./measure.js";

const rounds = Number(process.argv[2] ?? 15);
const N = 20_000;
const encoder = new TextEncoder();
const payloads = Array.from({ length: N }, (_, n) => {
  const body = encoder.encode(encodeEnvelope({ v: 1, ts: Date.now(), t: `tenant-${n % 10}`, d: { itemId: `sku-${n % 1000}`, qty: 1 + (n % 7), n } }));
  const raw = new Uint8Array(body.length + 90); // a header block before the payload
  raw.set(body, 90);
  return raw.subarray(90);
});
const prefix = cursorPrefix({ namespace: "bench", topic: "bench.reads", incarnation: "k1x" });
const decoder = new TextDecoder();
const fast = utf8Text();
type Side = "event, TextDecoder" | "event, utf8Text" | "text, TextDecoder" | "text, utf8Text";
const sides: Record<Side, (i: number) => number> = {
  "event, TextDecoder": (i) => decodeEvent<{ n: number }>("k1x", prefix, i + 1, payloads[i]!).data.n,
  "event, utf8Text": (i) => decodeEvent<{ n: number }>("k1x", prefix, i + 1, payloads[i]!, undefined, fast).data.n,
  "text, TextDecoder": (i) => decoder.decode(payloads[i]!).length,
  "text, utf8Text": (i) => fast(payloads[i]!).length,
};
const cpu = Object.fromEntries(Object.keys(sides).map((k) => [k, [] as number[]])) as Record<Side, number[]>;

let sink = 0;
for (let r = 0; r < rounds + 2; r++) {
  for (const side of Object.keys(sides) as Side[]) {
    const run = sides[side];
    const start = process.cpuUsage();
    for (let i = 0; i < N; i++) sink += run(i);
    const used = process.cpuUsage(start);
    if (r >= 2) cpu[side].push(((used.user + used.system) * 1000) / N); // two warm-up rounds
  }
}
for (const side of Object.keys(cpu) as Side[]) console.log(`${side}: median ${median(cpu[side]).toFixed(0)} ns CPU/event over ${rounds} rounds`);
console.log(`(checksum ${sink})`);
