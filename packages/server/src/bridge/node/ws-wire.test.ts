import { describe, it, expect } from "vitest";
import { createRequire } from "node:module";
import { wsTextMessage } from "./ws-wire.js";

// ws's own frame parser (the client side reads unmasked server frames)
const Receiver = (createRequire(import.meta.url)("ws") as { Receiver: unknown }).Receiver as new (o: { isServer: boolean }) => NodeJS.WritableStream & {
  on(e: "message", f: (data: Buffer, isBinary: boolean) => void): void;
  on(e: "error", f: (err: Error) => void): void;
};

function parse(bytes: Uint8Array): Promise<{ text: string; isBinary: boolean }> {
  return new Promise((resolve, reject) => {
    const receiver = new Receiver({ isServer: false });
    receiver.on("message", (data, isBinary) => resolve({ text: data.toString(), isBinary }));
    receiver.on("error", reject);
    receiver.write(Buffer.from(bytes));
  });
}

describe("ws wire", () => {
  it("ws wire - a prebuilt server message is one unmasked final TEXT frame that ws reads back as the same text", async () => {
    // the three length encodings: 7-bit, 16-bit (126..65535) and 64-bit (over 65535), UTF-8 included
    for (const text of ["", '{"type":"event"}', `{"t":"${"é".repeat(62)}"}`, "x".repeat(125), "y".repeat(126), "z".repeat(65_535), `{"d":"${"ü".repeat(40_000)}"}`]) {
      const wire = wsTextMessage(text);
      const size = Buffer.byteLength(text);
      expect(wire.length).toBe(size + (size < 126 ? 2 : size < 65_536 ? 4 : 10));
      expect(wire[0]).toBe(0x81); // FIN + TEXT, no RSV bits
      expect(wire[1]! & 0x80).toBe(0); // not masked (server to client)
      expect(await parse(wire)).toEqual({ text, isBinary: false });
    }
  });
});
