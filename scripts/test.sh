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
#
# Independent parts run side by side in lanes, each with its own log, printed
# when the lane ends. What the browser tests wait for (the server's build and
# the release app) runs at normal priority; the other builds (fuzzing, the
# app's checks, the benchmarks' wasm) at the lowest, so they only take what
# is left and the tests beside them keep the time their timeouts expect. The
# first lane to fail stops the run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# Job control: each lane is a process group, stopped whole when the run ends.
set -m
scripts/setup.sh --browser --postgres --ops --docs --fuzz
export PATH="$PWD/node_modules/.bin:$PATH"
# One full run reuses nothing incremental builds keep, and they cost gigabytes of disk.
export CARGO_INCREMENTAL=0
# Clippy lints the workspace's crates while the tests' builds compile them
# (clippy-driver as the workspace's compiler, every warning an error): one
# build instead of a check and a build. What ships (the release app) and the
# fuzzing build are compiled by plain rustc: clippy turns MIR optimisations off.
export RUSTC_WORKSPACE_WRAPPER CLIPPY_ARGS=-Dwarnings
RUSTC_WORKSPACE_WRAPPER="$(rustc --print sysroot)/bin/clippy-driver"
plain_rustc() { env -u RUSTC_WORKSPACE_WRAPPER -u CLIPPY_ARGS "$@"; }

logs=$(mktemp -d "${TMPDIR:-/tmp}/countersign-test.XXXXXX")
# Two throwaway PostgreSQL servers for the server's PostgreSQL tests, stopped on
# exit: a plain one, and one as managed services run it (TLS only, passwords).
pg_dir="$logs/pg"
mkdir "$pg_dir"
# PostgreSQL runs as its own user (when this runs as root): it must reach its folders in here.
chmod 755 "$logs" "$pg_dir"
declare -A lane_pid=()
finish() {
  for pid in "${lane_pid[@]}"; do kill -- "-$pid" 2>/dev/null || true; done
  scripts/postgres.sh stop "$pg_dir/plain"
  scripts/postgres.sh stop "$pg_dir/tls"
  rm -rf "$logs"
}
trap finish EXIT
export COUNTERSIGN_TEST_POSTGRES COUNTERSIGN_TEST_POSTGRES_TLS="$pg_dir/tls"
COUNTERSIGN_TEST_POSTGRES=$(scripts/postgres.sh start "$pg_dir/plain")
scripts/postgres.sh start-tls "$pg_dir/tls" >/dev/null
export COUNTERSIGN_REQUIRE_POSTGRES=1
# The MCP gate's tests use .venv-mcp (set up in the python lane): never skipped here.
export COUNTERSIGN_REQUIRE_MCP=1
# The metrics test scrapes with a real Prometheus (installed above by --ops).
export COUNTERSIGN_REQUIRE_PROMETHEUS=1
# The systemd unit in deploy/ is checked with systemd-analyze verify (also --ops).
export COUNTERSIGN_REQUIRE_SYSTEMD=1

# The docs book shows screenshots the browser tests took after this moment.
run_started=$(date +%s)

# Each step says how long it took and how much CPU its commands used (the
# run is CPU-bound: that is the work to cut); each lane, and the run, how
# long in all.
step_name="" step_start=$SECONDS step_cpu=0
# The CPU seconds (user and system) of this shell's finished commands, in $cpu_now.
# (`times` in this shell, through a file: a command substitution is another process.)
cpu_now=0
count_cpu() {
  local file="$logs/times.$BASHPID"
  times >"$file"
  cpu_now=$(awk 'NR == 2 { split($1, u, "m"); split($2, s, "m"); printf "%d", u[1] * 60 + u[2] + s[1] * 60 + s[2] }' "$file")
}
step() {
  count_cpu
  [[ -n "$step_name" ]] && printf '(%s: %d s, %d s of CPU)\n' "$step_name" $((SECONDS - step_start)) $((cpu_now - step_cpu))
  step_name="$*" step_start=$SECONDS step_cpu=$cpu_now
  [[ -n "$step_name" ]] && printf '\n== %s\n' "$*"
  return 0
}
# lane NAME FUNCTION: runs FUNCTION in the background, its output in NAME's log.
lane() {
  ( step_name="" step_start=$SECONDS; count_cpu; step_cpu=$cpu_now; "$2"; step "" ) >"$logs/$1.log" 2>&1 &
  lane_pid[$1]=$!
  printf '\n== lane %s started\n' "$1"
}
# join NAME...: waits for each lane and prints its log; a failed lane ends the run.
join() {
  local name status
  for name in "$@"; do
    status=0
    wait "${lane_pid[$name]}" || status=$?
    unset "lane_pid[$name]"
    printf '\n======== lane %s (ended after %d s of the run)\n' "$name" "$SECONDS"
    cat "$logs/$name.log"
    if ((status != 0)); then
      printf '\n======== lane %s FAILED (exit %d)\n' "$name" "$status"
      exit "$status"
    fi
  done
}
# Builds yield the CPU to whatever runs beside them.
low_priority() { renice -n 19 -p "$BASHPID" >/dev/null; }

python_envs() {
  step "Python environments (udspy, MCP, OpenAI Agents, LangGraph, the Python SDK, django-oidc-provider, slack-sdk, aiosmtpd) and the TypeScript SDK's tools"
  plain_rustc scripts/setup.sh --udspy --mcp --oidc --slack --mail --openai-agents --langgraph --sdk
}

release_app() {
  step "release wasm build"
  plain_rustc scripts/build-app.sh
}

fuzzing() {
  # Below even the low-priority builds (SCHED_IDLE): the wasm checks are the
  # longest lane, and the fuzzing lane ends well before the rest.
  chrt -i -p 0 "$BASHPID" >/dev/null 2>&1 || low_priority
  step "fuzzing, bounded (scripts/fuzz.sh: 10 s per target, seeded from the fixtures)"
  plain_rustc scripts/fuzz.sh 10
}

native_build() {
  # One build of every native crate's targets: the server's own builds
  # (`cargo build -p countersign-server` in scripts/run.sh and the benchmarks)
  # resolve the same features, so they build nothing again (the server names
  # what the domain's and its own dev-dependencies turn on). The binaries and
  # examples the browser tests drive are built here too: `--all-targets` builds
  # the examples as tests, so the plain build below puts
  # target/debug/examples/seed in place before the browser tests start.
  step "clippy and the build of every native target (agent, server, domain, markup)"
  cargo test -p countersign-agent -p countersign-server -p countersign-domain -p countersign-markup --all-targets --no-run
  cargo test -p countersign-agent -p countersign-server --no-run
}

native_tests() {
  step "the Claude Code hook's fixtures against Anthropic's published hook types"
  node tests/claude-code/check-types.mjs
  step "domain tests; server API, security and soak tests on SQLite and PostgreSQL (figures printed)"
  cargo test -p countersign-agent -p countersign-server -p countersign-domain -p countersign-markup -- --show-output
  step "the OpenAI Agents SDK bridge against a real server (the SDK's scripted model)"
  PYTHONPATH=examples/openai_agents .venv-openai-agents/bin/python -m unittest examples/openai_agents/test_bridge.py
  step "the udspy bridge against a real server (one approval runs the tool once)"
  PYTHONPATH=examples/udspy .venv-udspy/bin/python -m unittest examples/udspy/test_bridge.py
  step "the SDKs: Python (mypy --strict) and TypeScript (tsc --strict) against a real server"
  (cd sdk/python && PYTHONPATH=src ../../.venv-sdk/bin/mypy && PYTHONPATH=src ../../.venv-sdk/bin/python -m pytest -q)
  (cd sdk/typescript && npx tsc -p . && node --test test/*.test.mjs)
}

app_checks() {
  step "clippy and the build of every wasm target (the app, the first paint, the benchmarks' wasm, the Leptos floor)"
  # The `quick` profile: the one scripts/run.sh builds the app with, so its
  # browser test (first-run.spec.mjs) builds only the app's own crate again.
  (low_priority; cargo test --profile quick -p countersign-app -p countersign-first-paint -p countersign-bench -p countersign-floor --target wasm32-unknown-unknown --all-targets --no-run)
  step "the app as scripts/run.sh builds it (the quick profile)"
  (low_priority; cargo build --profile quick -p countersign-app --target wasm32-unknown-unknown)
  step "app view-logic tests (wasm, headless chromium)"
  CHROMEDRIVER=/usr/bin/chromedriver cargo test --profile quick -p countersign-app --target wasm32-unknown-unknown
  step "the benchmarks' builds (bench/run.mjs --prepare: their wasm and the Leptos floor)"
  (low_priority; node bench/run.mjs --prepare)
}

step "format"
cargo fmt --all --check
step ""

lane python python_envs
lane release release_app
lane fuzz fuzzing
lane native-build native_build
join python native-build
lane native-tests native_tests
lane app-checks app_checks
join release

step "browser tests (headless chromium; the server tests drive target/debug/countersign and its seed example, built above)"
npx playwright test --project desk

step "the docs: the book (mdBook) with this run's screenshots and every link resolving; the runnable examples against a real server"
node scripts/book.mjs --screenshots-since "$run_started"
node --test tests/docs/
step ""

# The smoke run needs the benchmarks' builds (app-checks); it runs beside
# the lanes still going.
join app-checks
step "the README's run command as a newcomer runs it (its builds are the wasm checks' and the native build's)"
npx playwright test --project first-run
step "benchmarks, smoke run (bench/run.mjs --quick: smallest sizes, so the benchmarks cannot rot)"
# dist/ is the release build the browser tests just ran.
node bench/run.mjs --quick --built
step ""

join native-tests fuzz
printf 'all tests passed in %d s\n' "$SECONDS"
