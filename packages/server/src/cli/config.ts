/**
 * The `tidemark serve` config: an ESM module whose default export names the exposed topics and
 * the authentication and authorization rules (or a function of the Sync that returns them).
 */
import { InvalidArgumentError, type SubscriptionMode } from "@tidemark/shared";
import { existsSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";
import type { Sync, TopicOptions } from "../core/types.js";
import type { HubRegistryOptions } from "../core/hub-options.js";
import type { BridgeOptions, ExposedTopic, AuthorizeRequest } from "../bridge/options.js";
import type { AuthorizeResult } from "../bridge/grant.js";

/** A topic declared by the config: its declaration plus who may read it. */
export interface ConfigTopic<P = unknown> extends TopicOptions {
  /**
   * `true` grants one tenant's subscribe; a subscribe without a tenant needs `{ wholeTopic: true }`.
   * @example authorize: (user, { tenantId }) => tenantId !== undefined && user.tenants.includes(tenantId)
   */
  authorize(principal: P, request: AuthorizeRequest): AuthorizeResult | Promise<AuthorizeResult>;
  /** The name clients use. @default id */
  name?: string;
  modes?: SubscriptionMode[];
}

/** What a config module default-exports (or what its default-exported function returns). */
export interface TidemarkConfig<P = unknown> {
  /** @default TIDEMARK_NAMESPACE or "app" */
  namespace?: string;
  topics: (ConfigTopic<P> | ExposedTopic<P>)[];
  authenticate: BridgeOptions<P>["authenticate"];
  origins?: BridgeOptions<P>["origins"];
  cookieName?: string;
  path?: string;
  limits?: BridgeOptions<P>["limits"];
  heartbeatMs?: number;
  drainSpreadMs?: number;
  /** Warm each exposed topic's hub feed at start and hold it this long (`BridgeOptions.warmHubsMs`). @default 60000 under `tidemark serve` */
  warmHubsMs?: number;
  /**
   * The Sync's hub settings (`createSync({ hubs })`), for example a larger `feedBacklogBytes` for
   * resume storms of many tenants. Read before the Sync exists, so only from an object config: a
   * function config that returns `hubs` is refused.
   */
  hubs?: HubRegistryOptions;
  principalKey?: BridgeOptions<P>["principalKey"];
  expiresAt?: BridgeOptions<P>["expiresAt"];
  logLevel?: BridgeOptions<P>["logLevel"];
}

export type ConfigModule<P = unknown> = TidemarkConfig<P> | ((context: { sync: Sync }) => TidemarkConfig<P> | Promise<TidemarkConfig<P>>);

/** Types a config module. @example export default defineConfig({ topics: [...], authenticate }) */
export function defineConfig<P>(config: ConfigModule<P>): ConfigModule<P> {
  return config;
}

/**
 * Imports a config module. A missing file, or a TypeScript file this Node cannot import, is an
 * `InvalidArgumentError` that says what to do; errors thrown by the module itself pass through.
 */
export async function loadConfigModule(file: string): Promise<ConfigModule> {
  const path = resolve(file);
  if (!existsSync(path)) throw new InvalidArgumentError(`config ${file} does not exist (looked at ${path})`);
  let mod: { default?: ConfigModule };
  try {
    mod = (await import(pathToFileURL(path).href)) as { default?: ConfigModule };
  } catch (cause) {
    throw explainImportError(file, cause, process.version) ?? cause;
  }
  if (!mod.default) throw new InvalidArgumentError(`config ${file} has no default export`);
  return mod.default;
}

/**
 * @internal The error to show when importing config `file` failed with `cause`, or undefined
 * for errors of the module's own. Node 20 cannot import `.ts`; Node 22.18+ and 23.6+ strip
 * types by default (22.6+ behind --experimental-strip-types).
 */
export function explainImportError(file: string, cause: unknown, nodeVersion: string): InvalidArgumentError | undefined {
  if ((cause as { code?: string }).code !== "ERR_UNKNOWN_FILE_EXTENSION" || !/\.[cm]?ts$/.test(file)) return undefined;
  return new InvalidArgumentError(
    `config ${file} is TypeScript, which Node ${nodeVersion} cannot import. Write it as .mjs (or .js in a "type": "module" package), ` +
      `run on Node 22.18+ or 23.6+ (which strip types by default), or load tsx first: NODE_OPTIONS="--import tsx" npx tidemark serve --config ${file}`,
    { cause },
  );
}

/** The namespace a config asks for, without evaluating a config function. */
export function configNamespace(mod: ConfigModule): string | undefined {
  return typeof mod === "function" ? undefined : mod.namespace;
}

/** The hub settings of an object config (the Sync is created with them, before the config is resolved). */
export function configHubs(mod: ConfigModule): HubRegistryOptions | undefined {
  if (typeof mod === "function") return undefined;
  if (mod.hubs !== undefined && (typeof mod.hubs !== "object" || mod.hubs === null || Array.isArray(mod.hubs))) {
    throw new InvalidArgumentError("config.hubs must be an object of hub settings (see createSync's hubs option)");
  }
  return mod.hubs;
}

/** Evaluates a config against a Sync: topics declared, every field checked. */
export async function resolveConfig<P>(mod: ConfigModule<P>, sync: Sync): Promise<{ config: TidemarkConfig<P>; topics: ExposedTopic<P>[] }> {
  const config = typeof mod === "function" ? await mod({ sync }) : mod;
  if (!config || !Array.isArray(config.topics) || config.topics.length === 0) {
    throw new InvalidArgumentError("config.topics must list at least one topic");
  }
  if (typeof mod === "function" && config.hubs !== undefined) {
    throw new InvalidArgumentError("config.hubs is read before the Sync is created: export an object config to set it (a config function's hubs would be ignored)");
  }
  if (typeof config.authenticate !== "function") throw new InvalidArgumentError("config.authenticate must be a function");
  const topics = config.topics.map((entry, i): ExposedTopic<P> => {
    if (typeof entry.authorize !== "function") throw new InvalidArgumentError(`config.topics[${i}] needs an authorize function`);
    if ("topic" in entry && entry.topic) return entry;
    const { authorize, name, modes, ...declaration } = entry as ConfigTopic<P>;
    return { topic: sync.topic(declaration), authorize, name, modes };
  });
  return { config, topics };
}

/**
 * The config used without `--config`: one demo topic whose tenants anyone may read. For trying
 * things out only. `true` grants tenant subscribes, not a tenant-less read of the whole topic.
 */
export const devConfig: TidemarkConfig<{ id: string }> = {
  topics: [{ id: "demo.notifications", authorize: () => true }],
  authenticate: (token) => ({ id: token }),
  origins: "*",
};
