/**
 * What `serveBridgeUws` uses of a uWebSockets.js build (v20), typed here so that Tidemark does
 * not depend on one: the operator passes the module they installed. Names follow its docs.
 */

/** A uWebSockets.js module: `import uws from "uWebSockets.js"` (or a build published under another name). */
export interface UwsModule {
  App(options?: Record<string, unknown>): UwsApp;
  us_listen_socket_close(listenSocket: UwsListenSocket): void;
  us_socket_local_port(listenSocket: UwsListenSocket): number;
}

/** uWS's listen token. */
export type UwsListenSocket = object;

export interface UwsApp {
  ws<U>(pattern: string, behavior: UwsBehavior<U>): UwsApp;
  any(pattern: string, handler: (res: UwsResponse, req: UwsRequest) => void): UwsApp;
  listen(host: string, port: number, cb: (listenSocket: UwsListenSocket | false) => void): UwsApp;
}

export interface UwsRequest {
  /** Lowercase in v20 (`getCaseSensitiveMethod` gives it as sent). */
  getMethod(): string;
  getCaseSensitiveMethod?(): string;
  getUrl(): string;
  getQuery(): string | undefined;
  forEach(cb: (key: string, value: string) => void): void;
}

export interface UwsResponse {
  writeStatus(status: string): UwsResponse;
  writeHeader(key: string, value: string): UwsResponse;
  write(chunk: string | Uint8Array): boolean;
  end(body?: string | Uint8Array, closeConnection?: boolean): UwsResponse;
  onAborted(handler: () => void): UwsResponse;
  onData(handler: (chunk: ArrayBuffer, isLast: boolean) => void): UwsResponse;
  cork(cb: () => void): UwsResponse;
  getRemoteAddressAsText(): ArrayBuffer;
  upgrade<U>(userData: U, secWebSocketKey: string, secWebSocketProtocol: string, secWebSocketExtensions: string, context: unknown): void;
}

export interface UwsWebSocket<U> {
  /** 1 sent, 0 sent and buffered, 2 dropped (over `maxBackpressure`). */
  send(message: string | Uint8Array | ArrayBuffer, isBinary?: boolean, compress?: boolean): number;
  getBufferedAmount(): number;
  end(code?: number, shortMessage?: string): void;
  close(): void;
  getUserData(): U;
}

export interface UwsBehavior<U> {
  compression?: number;
  maxPayloadLength?: number;
  idleTimeout?: number;
  maxBackpressure?: number;
  closeOnBackpressureLimit?: boolean | number;
  sendPingsAutomatically?: boolean;
  upgrade?: (res: UwsResponse, req: UwsRequest, context: unknown) => void;
  open?: (ws: UwsWebSocket<U>) => void;
  message?: (ws: UwsWebSocket<U>, message: ArrayBuffer, isBinary: boolean) => void;
  close?: (ws: UwsWebSocket<U>, code: number, message: ArrayBuffer) => void;
}
