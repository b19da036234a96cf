// The floor under the bridge's idle cost: a server that speaks only what an idle Tidemark
// connection needs (hello -> welcome, subscribe -> subscribed + caught_up, a ping every 10 s
// with the first at random in the second half of the interval, a pong read without parsing),
// with no topics, hubs or NATS. Run by floor.mjs over `ws` (KIND=ws, what the bridge uses), over a
// uWebSockets.js build (KIND=uws, UWS=its module path: uws.js or a uws_*.node binary), or over
// Node's own sockets with no WebSocket library (KIND=net: the handshake and the framing an idle
// connection needs, written here; whole frames per read assumed, enough for this load only).
import { Buffer } from "node:buffer";
import { createRequire } from "node:module";
import { performance } from "node:perf_hooks";
import { setInterval } from "node:timers";
import { TextDecoder } from "node:util";

const require = createRequire(new URL("../../packages/server/package.json", import.meta.url));
const KIND = process.env.KIND ?? "ws";
const PORT = Number(process.argv[2]);
const HB = Number(process.env.HB ?? 10_000);
const PING = '{"type":"ping"}';
const PONG = '{"type":"pong"}';
const conns = new Set();
const now = () => performance.now();

function onText(c, text) {
  c.seen = now();
  if (text === PONG) return;
  const f = JSON.parse(text);
  if (f.type === "hello") c.send(JSON.stringify({ type: "welcome", v: 1, connectionId: "c", heartbeatMs: HB, principal: "p", revision: 5 }));
  else if (f.type === "subscribe") {
    c.send(JSON.stringify({ type: "subscribed", id: f.id, hub: 1, mode: "hub" }));
    c.send(JSON.stringify({ type: "caught_up", id: f.id, cursor: "s6t.0" }));
  }
}
const due = () => now() + HB / 2 + (Math.random() * HB) / 2;

// One walk a second, as the bridge's ticker does.
setInterval(() => {
  const t = now();
  for (const c of conns) {
    if (t < c.due) continue;
    c.due = t + HB;
    c.ping();
  }
}, 1000);

if (KIND === "uws") {
  const uWS = require(process.env.UWS);
  const decoder = new TextDecoder();
  const ping = Buffer.from(PING);
  uWS
    .App()
    .ws("/ws", {
      idleTimeout: 0,
      sendPingsAutomatically: false,
      maxPayloadLength: 65_536,
      upgrade: (res, req, context) =>
        res.upgrade({}, req.getHeader("sec-websocket-key"), req.getHeader("sec-websocket-protocol"), req.getHeader("sec-websocket-extensions"), context),
      open: (ws) => {
        const c = { due: due(), seen: now(), send: (t) => ws.send(t, false), ping: () => ws.send(ping, false) };
        ws.getUserData().c = c;
        conns.add(c);
      },
      message: (ws, message) => onText(ws.getUserData().c, decoder.decode(message)),
      close: (ws) => conns.delete(ws.getUserData().c),
    })
    .listen("127.0.0.1", PORT, (token) => {
      if (!token) throw new Error(`cannot listen on ${PORT}`);
      console.log('"listening"');
    });
} else if (KIND === "net") {
  const { createServer } = await import("node:http");
  const { createHash } = await import("node:crypto");
  const wire = Buffer.concat([Buffer.from([0x81, PING.length]), Buffer.from(PING)]);
  const frame = (text) => {
    const body = Buffer.from(text);
    const head = body.length < 126 ? Buffer.from([0x81, body.length]) : Buffer.from([0x81, 126, body.length >> 8, body.length & 0xff]);
    return Buffer.concat([head, body]);
  };
  const http = createServer();
  http.on("upgrade", (req, socket) => {
    const accept = createHash("sha1").update(`${req.headers["sec-websocket-key"]}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest("base64");
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\nSec-WebSocket-Protocol: tidemark.v1\r\n\r\n`);
    socket.setNoDelay(true);
    const c = { due: due(), seen: now(), send: (t) => socket.write(frame(t)), ping: () => socket.write(wire) };
    conns.add(c);
    socket.on("data", (buf) => {
      // Client frames are masked: opcode, length (7 bits or 16), a 4-byte mask, the payload.
      for (let at = 0; at + 6 <= buf.length; ) {
        const opcode = buf[at] & 0x0f;
        let len = buf[at + 1] & 0x7f;
        let head = 2;
        if (len === 126) {
          len = buf.readUInt16BE(at + 2);
          head = 4;
        }
        const mask = buf.subarray(at + head, at + head + 4);
        const body = Buffer.from(buf.subarray(at + head + 4, at + head + 4 + len));
        for (let i = 0; i < body.length; i++) body[i] ^= mask[i & 3];
        if (opcode === 1) onText(c, body.toString());
        else if (opcode === 8) socket.end();
        at += head + 4 + len;
      }
    });
    socket.on("error", () => undefined);
    socket.on("close", () => conns.delete(c));
  });
  http.listen(PORT, "127.0.0.1", () => console.log('"listening"'));
} else {
  const { WebSocketServer } = require("ws");
  // The bridge's ping: one frame built once, written to each socket as is (bridge/node/ws.ts).
  const wire = Buffer.concat([Buffer.from([0x81, PING.length]), Buffer.from(PING)]);
  const wss = new WebSocketServer({ host: "127.0.0.1", port: PORT, perMessageDeflate: false });
  wss.on("connection", (ws) => {
    const c = { due: due(), seen: now(), send: (t) => ws.send(t), ping: () => ws._socket.write(wire) };
    conns.add(c);
    ws.on("message", (data) => onText(c, data.toString()));
    ws.on("close", () => conns.delete(c));
  });
  wss.on("listening", () => console.log('"listening"'));
}
