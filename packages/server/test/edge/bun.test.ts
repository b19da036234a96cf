/** The shared bridge protocol suite on Bun (wsconnect, hono/bun). */
import { protocolSuite } from "./protocol.suite.js";
import { bunRuntime } from "./runtimes.js";

protocolSuite(bunRuntime);
