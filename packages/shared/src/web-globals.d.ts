/**
 * The few Web-standard globals shared code uses. Every runtime Tidemark supports has them (Node,
 * browsers, workers, Deno, Bun, workerd), but `lib: ["ES2023"]` without DOM or Node types does not
 * declare them: naming them here keeps everything else (`process`, `document`, `Buffer`) an error.
 */
declare global {
  interface TextEncoder {
    encode(input?: string): Uint8Array;
  }
  var TextEncoder: { new (): TextEncoder };
  interface TextDecoder {
    decode(input?: ArrayBufferView | ArrayBuffer): string;
  }
  var TextDecoder: { new (label?: string, options?: { fatal?: boolean; ignoreBOM?: boolean }): TextDecoder };
  function atob(data: string): string;
  function btoa(data: string): string;
}
export {};
