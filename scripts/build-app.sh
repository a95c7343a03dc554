#!/usr/bin/env bash
# Builds the release app into dist/ with trunk (offline, pinned tools) and prints its size.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PATH="$PWD/node_modules/.bin:$PATH"
trunk build --release
node scripts/size-report.mjs dist
