/**
 * Tidemark declares the NATS shapes of its public API itself (types.ts says why); this file, part
 * of `pnpm typecheck`, keeps them the same as the installed nats-core's, both ways: what nats.js
 * gives a user fits Tidemark's options, and what a user writes against Tidemark's types fits
 * nats.js. A field nats.js adds, drops or changes in an upgrade fails here.
 */
import { describe, expectTypeOf, it } from "vitest";
import { credsAuthenticator, wsconnect } from "@nats-io/nats-core";
import type { Authenticator, ConnectionOptions, NatsConnection, ReconnectToServerHandler, Server, ServerInfo, TlsOptions } from "@nats-io/nats-core";
import { connect } from "@nats-io/transport-node";
import type {
  ExternalNatsOptions,
  NatsAuthenticator,
  NatsConnect,
  NatsConnectionLike,
  NatsConnectionOptions,
  NatsInfo,
  NatsReconnectToServer,
  NatsServerEntry,
  NatsTlsOptions,
} from "./types.js";

describe("NATS shapes", () => {
  it("types - connection options are nats-core's ConnectionOptions, both ways", () => {
    expectTypeOf<NatsConnectionOptions>().toExtend<ConnectionOptions>();
    expectTypeOf<ConnectionOptions>().toExtend<NatsConnectionOptions>();
    expectTypeOf<Required<NatsConnectionOptions>>().toExtend<Required<ConnectionOptions>>();
    expectTypeOf<Required<ConnectionOptions>>().toExtend<Required<NatsConnectionOptions>>();
    expectTypeOf<keyof NatsConnectionOptions>().toEqualTypeOf<keyof ConnectionOptions>();
    expectTypeOf<ExternalNatsOptions>().toExtend<ConnectionOptions>();
  });

  it("types - the types options name are nats-core's, both ways", () => {
    expectTypeOf<NatsAuthenticator>().toExtend<Authenticator>();
    expectTypeOf<Authenticator>().toExtend<NatsAuthenticator>();
    expectTypeOf(credsAuthenticator(new Uint8Array())).toExtend<NatsAuthenticator>();
    expectTypeOf<NatsTlsOptions>().toEqualTypeOf<TlsOptions>();
    expectTypeOf<NatsServerEntry>().toEqualTypeOf<Server>();
    expectTypeOf<NatsInfo>().toExtend<ServerInfo>();
    expectTypeOf<ServerInfo>().toExtend<NatsInfo>();
    expectTypeOf<NatsReconnectToServer>().toExtend<ReconnectToServerHandler>();
    expectTypeOf<ReconnectToServerHandler>().toExtend<NatsReconnectToServer>();
  });

  it("types - nats.js's connect functions are NatsConnect, and their connection is a NatsConnectionLike", () => {
    expectTypeOf(wsconnect).toExtend<NatsConnect>();
    expectTypeOf(connect).toExtend<NatsConnect>();
    expectTypeOf<NatsConnection>().toExtend<NatsConnectionLike>();
    // A wrapper written against Tidemark's types hands nats.js what it takes.
    const wrapped: NatsConnect = (options) => wsconnect({ ...options, name: "wrapped" });
    expectTypeOf(wrapped).parameter(0).toExtend<ConnectionOptions>();
  });
});
