#!/usr/bin/env bash
# Runs every Countersign test on this machine, installing what is missing first:
# formatting, clippy (-D warnings) on every crate (the app for wasm32), the domain
# and CLI tests, the app's view-logic tests in wasm, the release wasm build with
# its size, and the browser tests.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/setup.sh --browser
export PATH="$PWD/node_modules/.bin:$PATH"

step() { printf '\n== %s\n' "$*"; }

step "format"
cargo fmt --all --check

step "clippy"
cargo clippy -p countersign-domain -p countersign-server --all-targets -- -D warnings
cargo clippy -p countersign-app --target wasm32-unknown-unknown --all-targets -- -D warnings

step "domain and CLI tests"
cargo test -p countersign-domain -p countersign-server

step "app view-logic tests (wasm, headless chromium)"
CHROMEDRIVER=/usr/bin/chromedriver cargo test -p countersign-app --target wasm32-unknown-unknown

step "release wasm build"
scripts/build-app.sh

step "browser tests (headless chromium)"
npx playwright test
