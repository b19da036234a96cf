/** The shared bridge protocol suite on Node (TCP NATS, the Node entry). */
import { protocolSuite } from "./protocol.suite.js";
import { nodeRuntime } from "./runtimes.js";

protocolSuite(nodeRuntime);
