/**
 * @internal A server-to-client WebSocket TEXT message as the bytes on the wire (RFC 6455 §5.2:
 * FIN + opcode 1, unmasked, 7/16/64-bit length, then the UTF-8). A server frame carries no mask,
 * so the same bytes serve every socket: an event frame shared by a hub's sockets is framed once,
 * and each socket's send is one write of a shared buffer (no per-socket header, copy or encode).
 */
export function wsTextMessage(text: string): Buffer {
  const size = Buffer.byteLength(text);
  const header = size < 126 ? 2 : size < 65_536 ? 4 : 10;
  const wire = Buffer.allocUnsafe(header + size);
  wire[0] = 0x81;
  if (size < 126) {
    wire[1] = size;
  } else if (size < 65_536) {
    wire[1] = 126;
    wire.writeUInt16BE(size, 2);
  } else {
    wire[1] = 127;
    wire.writeUInt32BE(Math.floor(size / 2 ** 32), 2);
    wire.writeUInt32BE(size >>> 0, 6);
  }
  wire.write(text, header, "utf8");
  return wire;
}
