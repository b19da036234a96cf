import { defineConfig } from "vitest/config";

// Unit tests sit beside the code; integration tests (real nats-server, real sockets) live in
// each package's test/ folder. Two cores: keep file parallelism low so spawned servers and
// timing-sensitive tests do not starve each other.
const resolve = { conditions: ["@tidemark/source"] };
export default defineConfig({
  resolve,
  ssr: { resolve: { conditions: ["@tidemark/source"], externalConditions: ["@tidemark/source"] } },
  test: {
    projects: [
      {
        resolve,
        ssr: { resolve: { conditions: ["@tidemark/source"], externalConditions: ["@tidemark/source"] } },
        test: { name: "unit", sequence: { groupOrder: 0 }, include: ["packages/*/src/**/*.test.ts", "apps/*/src/**/*.test.ts", "scripts/**/*.test.ts"], environment: "node" },
      },
      {
        resolve,
        ssr: { resolve: { conditions: ["@tidemark/source"], externalConditions: ["@tidemark/source"] } },
        test: {
          name: "integration",
          // Runs after the unit project, with its own worker count.
          sequence: { groupOrder: 1 },
          include: ["packages/*/test/**/*.test.ts"],
          environment: "node",
          testTimeout: 60_000,
          hookTimeout: 60_000,
          maxWorkers: 2,
          fileParallelism: true,
        },
      },
    ],
  },
});
