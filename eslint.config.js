// One lint setup for the workspace: typescript-eslint's recommended rules, two type-aware rules
// (promises nobody awaits), and the import rules that keep the layers apart (docs/architecture.md).
import js from "@eslint/js";
import tseslint from "typescript-eslint";

// Node-only modules: runtime-neutral code (shared, client, react, most of server) imports none.
const nodeOnly = {
  regex: "^(node:|ws$|@nats-io/transport-node|@hono/node-server)",
  message: "Runtime-neutral code imports no Node module: put Node glue in a Node adapter file (see docs/architecture.md).",
};
const serverPackage = {
  group: ["@tidemark/server", "@tidemark/server/*", "**/server/src/**", "**/server/test/**"],
  message: "Browser and shared code never imports the server.",
};
const browserPackages = {
  group: ["@tidemark/client", "@tidemark/client/*", "@tidemark/react", "**/client/src/**", "**/react/src/**"],
  message: "Shared code imports nothing of the client.",
};
// The core's patterns, written from a file `up` folders below src/: core/*.ts is one below,
// the files of its job folders (core/publish/, core/read/, ...) two.
const fromCore = (up, paths) => paths.map((p) => "../".repeat(up) + p);
const coreUpward = (up) => ({
  group: fromCore(up, ["hub/*", "bridge/*", "process/*", "index.js"]),
  message: "The topic core never imports the hub, bridge or process layers: they import it.",
});
const coreEmbedded = (up) => ({
  group: fromCore(up, ["embedded/*"]),
  message: "The runtime-neutral core imports nothing of the Node-only embedded/: the options and version features both use live in broker/.",
});
const brokerUpward = {
  group: ["../core/*", "../embedded/*", "../hub/*", "../bridge/*", "../process/*", "../transport/*"],
  message: "broker/ (the managed server's options, version features) is imported by the core and embedded/, and imports neither.",
};
const otherTests = {
  group: ["../../*/test/**", "../../../*/test/**"],
  message: "Tests import shared test helpers from @tidemark/testing, not from another package's test folder.",
};
const serverInternals = {
  group: ["**/server/src/*/**", "../**/src/*/**", "!**/src/edge/*", "@tidemark/server/src/**"],
  message: "Tests and benchmarks reach the server's internals through its one internal entry (packages/server/src/internal.ts, `@tidemark/server/internal`), public names through src/index.ts.",
};
const restrict = (...patterns) => ["error", { patterns }];

// The server's Node adapter files: the embedded nats-server, the CLI, the Node transport and the
// Node WebSocket glue of the bridge (over `ws`, and over uWebSockets.js, a Node addon). Everything
// else under server/src runs on any runtime.
const serverNodeFiles = [
  "packages/server/src/embedded/**",
  "packages/server/src/cli/**",
  "packages/server/src/transport/node.ts",
  "packages/server/src/bridge/node/**",
  "packages/server/src/bridge/uws/**",
  "packages/server/src/node-sync.ts",
];

export default tseslint.config(
  { ignores: ["**/dist/**", "**/node_modules/**", "**/.tidemark/**", "**/test-results/**", "**/playwright-report/**", "e2e/packaging/app/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "no-constant-condition": ["error", { checkLoops: false }],
    },
  },
  {
    // Only typed error classes are thrown: a code's class is in packages/shared/src/errors.ts.
    files: ["packages/*/src/**/*.ts"],
    ignores: ["packages/shared/src/errors.ts", "**/*.test.ts"],
    rules: {
      "no-restricted-syntax": [
        "error",
        {
          selector: "NewExpression[callee.name='TidemarkError']",
          message: "Throw the code's class from @tidemark/shared (e.g. new TopicNotFoundError(...)), not new TidemarkError(code, ...).",
        },
      ],
    },
  },
  {
    // Type-aware: each file is checked with the tsconfig of the runtime it runs in.
    files: ["**/*.ts", "**/*.tsx"],
    languageOptions: {
      parserOptions: {
        project: ["packages/*/tsconfig.json", "packages/*/tsconfig.test.json", "tsconfig.json"],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": "error",
    },
  },
  { files: ["packages/shared/src/**"], rules: { "no-restricted-imports": restrict(nodeOnly, serverPackage, browserPackages) } },
  { files: ["packages/client/src/**", "packages/react/src/**"], rules: { "no-restricted-imports": restrict(nodeOnly, serverPackage) } },
  { files: ["packages/server/src/**"], ignores: serverNodeFiles, rules: { "no-restricted-imports": restrict(nodeOnly) } },
  { files: ["packages/server/src/core/*.ts"], ignores: serverNodeFiles, rules: { "no-restricted-imports": restrict(nodeOnly, coreUpward(1), coreEmbedded(1)) } },
  { files: ["packages/server/src/core/*/**"], ignores: serverNodeFiles, rules: { "no-restricted-imports": restrict(nodeOnly, coreUpward(2), coreEmbedded(2)) } },
  { files: ["packages/server/src/broker/**"], rules: { "no-restricted-imports": restrict(nodeOnly, brokerUpward) } },
  {
    files: ["packages/*/test/**", "packages/*/src/**/*.test.ts"],
    // The client's conformance run still reuses the server's conformance model and system (a
    // move of that suite into @tidemark/testing is left for later); nothing else may.
    ignores: ["packages/client/test/conformance.test.ts", "packages/client/test/engine-reader.ts"],
    rules: { "no-restricted-imports": restrict(otherTests) },
  },
  { files: ["packages/server/test/**"], rules: { "no-restricted-imports": restrict(otherTests, serverInternals) } },
  { files: ["bench/**"], rules: { "no-restricted-imports": restrict(serverInternals) } },
  {
    files: ["**/*.js", "**/*.mjs"],
    languageOptions: { globals: { process: "readonly", console: "readonly", URL: "readonly" } },
  },
);
