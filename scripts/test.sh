#!/usr/bin/env bash
# Runs every Countersign test on this machine, installing what is missing first:
# formatting, clippy (-D warnings) on every crate (the app for wasm32), the domain
# tests, the server's HTTP API tests on SQLite and on throwaway PostgreSQL servers,
# one with TLS (and the MCP gate between a real MCP client and server, metrics
# scraped by a real Prometheus, the systemd unit under systemd-analyze), the
# OpenAI Agents SDK bridge and the SDKs against a real server, the app's
# view-logic tests in wasm, the release wasm build with its size, and the
# browser tests (with a real udspy agent asking through Countersign, a real
# LangGraph server whose interrupts are reviewed, the real Claude Code CLI
# asking through the hook, and the server behind Debian's nginx with TLS), the
# hook's fixtures against Anthropic's hook types, the docs book with its links
# and its runnable examples, a bounded fuzzing run (10 s
# per target), and a smoke run of the benchmarks.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/setup.sh --browser --postgres --udspy --mcp --openai-agents --langgraph --sdk --ops --docs --fuzz
export PATH="$PWD/node_modules/.bin:$PATH"
# One full run reuses nothing incremental builds keep, and they cost gigabytes of disk.
export CARGO_INCREMENTAL=0

# Two throwaway PostgreSQL servers for the server's PostgreSQL tests, stopped on
# exit: a plain one, and one as managed services run it (TLS only, passwords).
pg_dir=$(mktemp -d "${TMPDIR:-/tmp}/countersign-pg.XXXXXX")
# PostgreSQL runs as its own user (when this runs as root): it must reach its folders in here.
chmod 755 "$pg_dir"
trap 'scripts/postgres.sh stop "$pg_dir/plain"; scripts/postgres.sh stop "$pg_dir/tls"; rm -rf "$pg_dir"' EXIT
export COUNTERSIGN_TEST_POSTGRES COUNTERSIGN_TEST_POSTGRES_TLS="$pg_dir/tls"
COUNTERSIGN_TEST_POSTGRES=$(scripts/postgres.sh start "$pg_dir/plain")
scripts/postgres.sh start-tls "$pg_dir/tls" >/dev/null
export COUNTERSIGN_REQUIRE_POSTGRES=1
# The MCP gate's tests use .venv-mcp (set up above): never skipped here.
export COUNTERSIGN_REQUIRE_MCP=1
# The metrics test scrapes with a real Prometheus (installed above by --ops).
export COUNTERSIGN_REQUIRE_PROMETHEUS=1
# The systemd unit in deploy/ is checked with systemd-analyze verify (also --ops).
export COUNTERSIGN_REQUIRE_SYSTEMD=1

# The docs book shows screenshots the browser tests took after this moment.
run_started=$(date +%s)

# Each step says how long the one before it took, and the run ends with the total.
step_name="" step_start=$SECONDS
step() {
  [[ -n "$step_name" ]] && printf '(%s: %d s)\n' "$step_name" $((SECONDS - step_start))
  step_name="$*" step_start=$SECONDS
  printf '\n== %s\n' "$*"
}

step "format"
cargo fmt --all --check

step "clippy"
cargo clippy -p countersign-domain -p countersign-markup -p countersign-first-paint -p countersign-server --all-targets -- -D warnings
cargo clippy -p countersign-app -p countersign-bench -p countersign-floor --target wasm32-unknown-unknown --all-targets -- -D warnings

step "the Claude Code hook's fixtures against Anthropic's published hook types"
node tests/claude-code/check-types.mjs

step "domain tests; server API, security and soak tests on SQLite and PostgreSQL (figures printed)"
cargo test -p countersign-domain -p countersign-markup -p countersign-server -- --show-output

step "the OpenAI Agents SDK bridge against a real server (the SDK's scripted model)"
# The same build as the browser tests take (with the seed example): built once for both.
cargo build -p countersign-server --bin countersign --example seed
PYTHONPATH=examples/openai_agents .venv-openai-agents/bin/python -m unittest examples/openai_agents/test_bridge.py

step "the SDKs: Python (mypy --strict) and TypeScript (tsc --strict) against a real server"
(cd sdk/python && PYTHONPATH=src ../../.venv-sdk/bin/mypy && PYTHONPATH=src ../../.venv-sdk/bin/python -m pytest -q)
(cd sdk/typescript && npx tsc -p . && node --test test/*.test.mjs)

step "app view-logic tests (wasm, headless chromium)"
CHROMEDRIVER=/usr/bin/chromedriver cargo test -p countersign-app --target wasm32-unknown-unknown

step "release wasm build"
scripts/build-app.sh

step "browser tests (headless chromium; the server tests drive target/debug/countersign and its seed example)"
cargo build -p countersign-server --bin countersign --example seed
npx playwright test

step "the docs: the book (mdBook) with this run's screenshots and every link resolving; the runnable examples against a real server"
node scripts/book.mjs --screenshots-since "$run_started"
node --test tests/docs/

step "fuzzing, bounded (scripts/fuzz.sh: 10 s per target, seeded from the fixtures)"
scripts/fuzz.sh 10

step "benchmarks, smoke run (bench/run.mjs --quick: smallest sizes, so the benchmarks cannot rot)"
# dist/ is the release build the browser tests just ran.
node bench/run.mjs --quick --built
step "done"
printf 'all tests passed in %d s\n' "$SECONDS"
