#!/usr/bin/env bash
# Quick start: install everything that is missing, then start the demo notification centre with
# the bridge on the embedded NATS (http://127.0.0.1:3000 unless PORT says otherwise).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
exec pnpm start
