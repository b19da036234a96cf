// `tsc --noEmit` in the scratch app: every public entry point and type resolves from the
// installed tarballs (their `exports`, `types` and `.d.ts` files), with no workspace paths. It
// runs twice, with `strict` and `skipLibCheck: false`, then also with
// `exactOptionalPropertyTypes` (tsconfig.exact.json): every declaration file these imports load
// must pass both, so this file imports no `@nats-io` package itself.
import type { Cursor, ErrorCode, TidemarkEvent } from "@tidemark/shared";
import { InvalidCursorError, RetentionGapError, TidemarkError, decodeCursor } from "@tidemark/shared";
import type { BridgeOptions, Sync, Topic, TopicOptions } from "@tidemark/server";
import { createNodeBridge, createSync, lazySync, serveBridge, tokenAuthenticator } from "@tidemark/server";
import { createSync as createEdgeSync, websocketTransport } from "@tidemark/server/edge";
import type { EdgeSyncOptions, ExternalNatsOptions, NatsConnect, NatsTransport } from "@tidemark/server/edge";
import { createDenoBridge } from "@tidemark/server/edge/deno";
import { createBunBridge } from "@tidemark/server/edge/bun";
import { defineBridgeObject, routeToBridge } from "@tidemark/server/edge/workers";
import type { Client, ClientOptions, ClientState, Feed, FeedItem, Status } from "@tidemark/client";
import { backoffDelay, createClient } from "@tidemark/client";
import type { ConnectionState, FeedState, FeedStatus, TidemarkProviderProps } from "@tidemark/react";
import { TidemarkProvider, useConnection, useFeed, useLiveFeed } from "@tidemark/react";
// The SharedWorker entry has no exports; it must resolve with its types all the same.
import type {} from "@tidemark/client/worker";

// The NATS options a user writes, typed by Tidemark's own declarations: credentials, TLS, an
// authenticator and a reconnect policy, and a connect function of their own.
const natsOptions: ExternalNatsOptions = {
  servers: ["nats://127.0.0.1:4222"],
  name: "scratch",
  authenticator: (nonce?: string) => ({ user: "u", pass: nonce ?? "p" }),
  tls: { caFile: "/etc/ssl/ca.pem" },
  reconnectToServer: (pool) => pool[0] ?? null,
};
const viaWebSocket: NatsTransport = websocketTransport();
const wrapped: NatsConnect = (options) => viaWebSocket.connect({ ...options, token: "t" });
const edgeOptions: EdgeSyncOptions = { nats: { ...natsOptions, servers: "wss://127.0.0.1:443" }, connect: wrapped };

type Note = { text: string };
export const checks = {
  event: (e: TidemarkEvent<Note>): string => e.data.text,
  cursor: (c: Cursor): string => c,
  code: (e: TidemarkError): ErrorCode => e.code,
  gap: (e: RetentionGapError): number => e.firstAvailableSequence,
  topic: (s: Sync): Topic<Note> => s.topic<Note>({ id: "inbox" } satisfies TopicOptions),
  bridge: (o: Omit<BridgeOptions<{ id: string }>, "upgradeWebSocket">) => createNodeBridge(o),
  options: (o: ClientOptions): Client => createClient(o),
  state: (s: ClientState): Status => s.status,
  feed: (f: Feed<Note>): readonly FeedItem<Note>[] => f.items,
  react: (s: FeedState<Note>): FeedStatus => s.status,
  connection: (c: ConnectionState): number => c.tabs,
  props: (p: TidemarkProviderProps) => p.children,
  nats: (o: ExternalNatsOptions): Sync => createSync({ nats: o }),
  edge: (): Sync => createEdgeSync(edgeOptions),
  closed: async (): Promise<boolean> => (await wrapped(natsOptions)).isClosed(),
  values: [InvalidCursorError, decodeCursor, createSync, lazySync, serveBridge, tokenAuthenticator, createEdgeSync, createDenoBridge, createBunBridge, defineBridgeObject, routeToBridge, backoffDelay, TidemarkProvider, useConnection, useFeed, useLiveFeed],
};
