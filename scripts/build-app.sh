#!/usr/bin/env bash
# Builds the release app into dist/ with trunk (offline, pinned tools), makes it
# run under a strict Content-Security-Policy, and prints its size.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PATH="$PWD/node_modules/.bin:$PATH"
trunk build --release
node scripts/harden-dist.mjs dist
node scripts/size-report.mjs dist
