/** The shared bridge protocol suite on Cloudflare workerd (wsconnect, a Durable Object). */
import { protocolSuite } from "./protocol.suite.js";
import { workerdRuntime } from "./runtimes.js";

protocolSuite(workerdRuntime);
