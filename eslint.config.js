// One lint setup for the workspace: typescript-eslint's recommended rules, no type-aware rules
// (they would double the time of `pnpm test` for little gain on top of `tsc --strict`).
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["**/dist/**", "**/node_modules/**", "**/.tidemark/**", "**/test-results/**", "**/playwright-report/**"] },
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
    files: ["**/*.js", "**/*.mjs"],
    languageOptions: { globals: { process: "readonly", console: "readonly", URL: "readonly" } },
  },
);
