/** `ws`, resolved from @tidemark/server (a dependency there, not of the workspace root). */
import { createRequire } from "node:module";

const require = createRequire(new URL("../../packages/server/package.json", import.meta.url));
const ws = require("ws") as typeof import("ws");
export const WebSocket = ws.WebSocket;
export const WebSocketServer = ws.WebSocketServer;
export type WebSocket = import("ws").WebSocket;
