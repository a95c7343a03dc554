#!/usr/bin/env bash
# Runs Countersign: installs what is missing, builds the app, and serves it on
# 127.0.0.1 (PORT, default 8080) with its embedded demo reviews. Prints the URL.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/setup.sh
scripts/build-app.sh
exec node scripts/serve-dist.mjs dist "${PORT:-8080}"
