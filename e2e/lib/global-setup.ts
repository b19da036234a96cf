// Builds the demo page once (vite build) before any test starts a server.
import { execFileSync } from "node:child_process";
import { demoDir } from "./demo-server.js";

export default function globalSetup(): void {
  execFileSync("pnpm", ["exec", "vite", "build", "--logLevel", "warn"], { cwd: demoDir, stdio: "inherit" });
}
