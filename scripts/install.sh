#!/usr/bin/env bash
# Installs what Tidemark needs on Debian/Ubuntu and the workspace itself: the system's
# nats-server (bookworm: 2.9.10, the oldest supported, kept for the compatibility test leg),
# the newest nats-server of Debian's archive into .tools/ (scripts/install-nats.sh; what
# Tidemark uses by default), Chromium (the e2e browser), pnpm, then the packages from the lockfile.
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

missing=()
[ -x /usr/sbin/nats-server ] || missing+=(nats-server)
have_chromium() { command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || [ -x /usr/bin/chromium ]; }
have_chromium || missing+=(chromium)
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing ${missing[*]} with apt-get"
  as_root apt-get update -qq
  # Debian names the browser package chromium; Ubuntu names it chromium-browser (a snap).
  if ! DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "${missing[@]}" >/dev/null; then
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "${missing[@]/#chromium/chromium-browser}" >/dev/null
  fi
fi

bash scripts/install-nats.sh || echo "warning: tests and the embedded server fall back to the system's nats-server" >&2

if ! command -v pnpm >/dev/null 2>&1; then
  echo "installing pnpm 10 with npm"
  as_root npm install -g pnpm@10.34.9 >/dev/null
fi

pnpm install --frozen-lockfile
