/** The shared bridge protocol suite on Deno (wsconnect, hono/deno). */
import { protocolSuite } from "./protocol.suite.js";
import { denoRuntime } from "./runtimes.js";

protocolSuite(denoRuntime);
