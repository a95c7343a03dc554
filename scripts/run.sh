#!/usr/bin/env bash
# Runs Countersign: installs only what running needs (the wasm target and
# wasm-bindgen-cli), builds the app (the `quick` profile) and the server (the
# dev profile, which the tests build too), and starts `countersign serve --demo` on 127.0.0.1 (PORT, default 8080) with a
# SQLite file under data/ (COUNTERSIGN_DATA names another folder). Opened from
# the server, the app asks for a reviewer key: paste the printed demo one. The
# release build, with its size budgets, is scripts/build-app.sh; `trunk serve`
# is the development server.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
target_dir="$(cargo metadata --format-version 1 --no-deps | node -e 'process.stdout.write(JSON.parse(require("fs").readFileSync(0)).target_directory)')"
rustup target add wasm32-unknown-unknown
# The app and then the server build while wasm-bindgen-cli (which only the
# app's last step needs) compiles beside them, so both cores stay busy.
(
  cargo build --profile quick --package countersign-app --target wasm32-unknown-unknown
  cargo build --package countersign-server
) &
builds=$!
trap 'pkill -P "$builds" 2>/dev/null; kill "$builds" 2>/dev/null || true' EXIT
scripts/setup.sh --run
wait "$builds"
trap - EXIT
node scripts/assemble-app.mjs "$target_dir/wasm32-unknown-unknown/quick/countersign-app.wasm" "$target_dir/run-app"
binary="$target_dir/debug/countersign"
echo "countersign: the binary is $binary (put it on PATH to run the commands in the docs)"
exec "$binary" serve --demo --data "${COUNTERSIGN_DATA:-data}" --app-dir "$target_dir/run-app" --listen "127.0.0.1:${PORT:-8080}"
