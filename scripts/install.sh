#!/usr/bin/env bash
# Installs what Tidemark needs on Debian/Ubuntu and the workspace itself: nats-server (the
# embedded broker), Chromium (the e2e browser), pnpm, then the packages from the lockfile.
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

missing=()
command -v nats-server >/dev/null 2>&1 || [ -x /usr/sbin/nats-server ] || missing+=(nats-server)
command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || missing+=(chromium)
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing ${missing[*]} with apt-get"
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if ! command -v pnpm >/dev/null 2>&1; then
  echo "installing pnpm 10 with npm"
  as_root npm install -g pnpm@10.34.9 >/dev/null
fi

pnpm install --frozen-lockfile
