/**
 * The shared bridge protocol suite on Node with uWebSockets.js (serveBridgeUws). The build the
 * suites use is native for Node 16–20; on a later Node the package falls back to JavaScript,
 * and what is tested there is that serveBridgeUws refuses it.
 */
import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "@tidemark/shared";
import { createNodeBridge, createSync, serveBridgeUws } from "../../src/index.js";
import { bridgeOptions } from "./app/options.js";
import { protocolSuite } from "./protocol.suite.js";
import { loadTestUws, testUwsIsNative } from "@tidemark/testing";
import { uwsRuntime } from "./runtimes.js";

if (testUwsIsNative()) {
  protocolSuite(uwsRuntime);
} else {
  describe("edge uws", () => {
    it(`edge uws - without a native build for Node ${process.versions.node}, serveBridgeUws refuses the package's JavaScript fallback`, async () => {
      const sync = createSync({ nats: { servers: "nats://127.0.0.1:1" }, namespace: "uws" });
      try {
        const bridge = createNodeBridge(bridgeOptions(sync));
        await expect(serveBridgeUws(bridge, { uws: loadTestUws(), port: 0 })).rejects.toBeInstanceOf(InvalidArgumentError);
      } finally {
        await sync.close();
      }
    });
  });
}
