#!/usr/bin/env bash
# Builds the release app into dist/ with trunk (offline, pinned tools), makes it
# run under a strict Content-Security-Policy, writes brotli and gzip copies of
# its files for servers that send precompressed files, and prints its size.
# COUNTERSIGN_BASE=/countersign/ builds it for a static host that serves it
# under that path (default /); `countersign serve` serves the app at /.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PATH="$PWD/node_modules/.bin:$PATH"
# Release only: screens load on demand (src/pages/on_demand.rs). trunk builds with
# the split feature and assembles dist/; split-app.mjs then cuts cargo's wasm into
# the first load and the chunks, replacing trunk's unsplit wasm and glue.
trunk build --release --features split
target_dir="$(cargo metadata --format-version 1 --no-deps | node -e 'process.stdout.write(JSON.parse(require("fs").readFileSync(0)).target_directory)')"
node scripts/split-app.mjs dist "$target_dir/wasm32-unknown-unknown/wasm-release/countersign-app.wasm"
# A first visit's inbox is drawn by a small module while the app loads. Built
# with the app as trunk built it (which is then fresh): one feature resolution
# for both, so the module reuses every dependency the app's build compiled.
cargo build --package countersign-app --features countersign-app/split --package countersign-first-paint \
  --target wasm32-unknown-unknown --profile wasm-release
node scripts/first-paint.mjs dist "$target_dir/wasm32-unknown-unknown/wasm-release/countersign_first_paint.wasm"
node scripts/minify-css.mjs dist
node scripts/harden-dist.mjs dist
node scripts/rebase-dist.mjs dist "${COUNTERSIGN_BASE:-/}"
node scripts/compress-dist.mjs dist
node scripts/size-report.mjs dist
