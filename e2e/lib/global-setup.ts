// Builds the demo page once (vite build) before any test starts a server, then the React
// hooks' page into the demo's dist/react (the demo build empties dist first).
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { demoDir } from "./demo-server.js";

const reactConfig = fileURLToPath(new URL("../react-app/vite.config.ts", import.meta.url));

export default function globalSetup(): void {
  execFileSync("pnpm", ["exec", "vite", "build", "--logLevel", "warn"], { cwd: demoDir, stdio: "inherit" });
  execFileSync("pnpm", ["exec", "vite", "build", "--config", reactConfig, "--logLevel", "warn"], { cwd: demoDir, stdio: "inherit" });
}
