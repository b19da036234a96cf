/**
 * @tidemark/testing: private test helpers every package's tests share (like nats.js's `nst`): a
 * throwaway nats-server per suite, a three-node cluster, and `tidemark serve` child processes.
 */
export { monitor, startTestNats, uniqueNamespace, type TestNats } from "./nats.js";
export {
  freePorts,
  startBridgeProcess,
  startTestCluster,
  until,
  writeBridgeConfig,
  type BridgeProcess,
  type ClusterNode,
  type TestCluster,
} from "./cluster.js";
export { freeze, thaw } from "./freeze.js";
export { loadTestUws, testUwsIsNative, TEST_UWS_BUILD } from "./uws.js";
export { FaultProxy, type Direction, type FaultOptions, type ProxyOptions } from "./proxy.js";
export { RouteMesh, type LinkFaultOptions } from "./mesh.js";
export { countRequests } from "./count-requests.js";
export { collectGarbage, heapUsedAfterGc, inspectorUrl } from "./collect-garbage.js";
export { STORM_TOPICS, StormClient, type StormClientOptions, type StormKind, type StormSub } from "./storm/client.js";
export { StormLoad, quantileOf, type Expected, type LoadStatus, type StormAccount, type StormLoadOptions } from "./storm/load.js";
export { StormPublisher, stormConfigSource, stormTopicOptions, tidemarkPublishOne, type PublishOne, type StormRates } from "./storm/publish.js";
