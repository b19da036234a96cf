import { existsSync } from "node:fs";

// Debian installs /usr/bin/chromium; Ubuntu's chromium-browser package is a snap.
const CANDIDATES = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/snap/bin/chromium"];

/** How to start Debian's Chromium: without these flags it floods the closed network. */
export const chromiumLaunch = {
  executablePath: process.env.CHROMIUM_PATH ?? CANDIDATES.find((p) => existsSync(p)) ?? "/usr/bin/chromium",
  args: [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
  ],
};
