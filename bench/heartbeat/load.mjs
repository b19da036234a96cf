// The idle clients of probe.mjs: N sockets, each with hello and one hub subscription, then idle,
// with the heartbeat of the old client (MODE=old: pong every ping, and a ping of its own each
// heartbeat) or of a 1.5 client (MODE=new: pong only after two silent heartbeats, no pings).
// Prints {"ready":N} once every subscription is caught up; then prints what it sent every 30 s.
import { createRequire } from "node:module";
import { setInterval, setTimeout } from "node:timers";

const WebSocket = createRequire(new URL("../../packages/server/package.json", import.meta.url))("ws");
const [url, count] = [process.argv[2], Number(process.argv[3])];
const MODE = process.env.MODE ?? "new";
const HB = Number(process.env.HB ?? 10_000);
let ready = 0;
let pings = 0;
let pongs = 0;
let closed = 0;

function open(i) {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, "tidemark.v1", { headers: { origin: url.replace("ws://", "http://").replace("/ws", "") }, perMessageDeflate: false });
    let lastSent = Date.now();
    const send = (text) => {
      ws.send(text);
      lastSent = Date.now();
    };
    ws.on("open", () => send(JSON.stringify({ type: "hello", v: 1, token: `u${i}` })));
    if (MODE === "old") setTimeout(() => setInterval(() => ws.readyState === 1 && send('{"type":"ping"}'), HB), Math.random() * HB);
    ws.on("message", (data) => {
      const frame = JSON.parse(String(data));
      if (frame.type === "welcome") send(JSON.stringify({ type: "subscribe", id: "s", topic: "inbox", tenantId: `u${i}`, mode: "hub" }));
      else if (frame.type === "caught_up") {
        ready++;
        resolve();
      } else if (frame.type === "ping") {
        pings++;
        if (MODE === "old" || Date.now() - lastSent >= 2 * HB) {
          pongs++;
          send('{"type":"pong"}');
        }
      }
    });
    ws.on("error", () => resolve());
    ws.on("close", () => {
      closed++;
      resolve();
    });
  });
}

for (let i = 0; i < count; i += 200) await Promise.all(Array.from({ length: Math.min(200, count - i) }, (_, k) => open(i + k)));
console.log(JSON.stringify({ ready }));
setInterval(() => process.stderr.write(`heartbeat load: pings ${pings}, pongs ${pongs}, closed ${closed}\n`), 30_000).unref();
setInterval(() => undefined, 1 << 30);
