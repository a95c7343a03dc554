#!/usr/bin/env bash
# Installs whatever this machine lacks to build and test Countersign, and skips
# what is present: the wasm target, rustfmt/clippy, wasm-bindgen-cli, trunk and
# wasm-split-cli at pinned versions, npm packages (binaryen's wasm-opt, Playwright), and, with
# --browser, Debian's chromium and chromedriver. With --run, only what
# scripts/run.sh needs: the wasm target and wasm-bindgen-cli. It prints
# what it does. With --postgres, Debian's PostgreSQL (and openssl) for the server's tests.
# With --udspy, a Python virtual environment (.venv-udspy) with the udspy agent
# library from PyPI, for the udspy bridge's browser test. With --langgraph, a
# virtual environment (.venv-langgraph) with the LangGraph server and langchain
# from PyPI (`langgraph dev`, in memory, no API keys), for the LangGraph browser tests.
# With --mcp, a virtual environment (.venv-mcp) with the official MCP Python SDK
# from PyPI, for the MCP gate's tests (a real MCP client and server). With
# --openai-agents, one (.venv-openai-agents) with the OpenAI Agents SDK, for the
# bridge's tests. Both bridges' venvs get the Python SDK (sdk/python), editable.
# With --sdk, one (.venv-sdk) with the Python SDK (sdk/python, installed from its
# folder with pip as its users do) and its test tools, pytest and mypy; and the
# TypeScript SDK's npm packages (sdk/typescript/node_modules).
# The environments' pinned packages are installed by uv (from PyPI, pinned, in
# .venv-uv): the same wheels pip installs, fetched and unpacked in parallel.
# With --oidc, one (.venv-oidc) with django-oidc-provider and Django, the sign-in
# browser tests' second OpenID provider (tests/django-oidc). With --slack, one
# (.venv-slack) with Slack's official Python SDK, which signs the Slack tests'
# clicks (tests/slack/click.py). With --mail, one (.venv-mail) with aiosmtpd, the
# SMTP server the e-mail browser tests receive Countersign's mail with.
# With --ops, what the operator's tests run against: Debian's prometheus (and promtool),
# systemd's systemd-analyze, nginx and Caddy.
# With --docs, mdBook, which builds the docs book (docs/), and jq for its examples.
# With --fuzz, cargo-fuzz, for scripts/fuzz.sh (on the stable toolchain: no sanitizer).
# Every version is pinned below.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

WASM_BINDGEN_VERSION=0.2.130
TRUNK_VERSION=0.21.14
WASM_SPLIT_VERSION=0.2.4
UV_VERSION=0.9.0
UDSPY_VERSION=0.1.8
MCP_VERSION=2.3.0
OPENAI_AGENTS_VERSION=0.24.0
# What the Python bridges check receipts with (Ed25519, RFC 8785).
CRYPTOGRAPHY_VERSION=50.0.2
RFC8785_VERSION=0.1.4
LANGGRAPH_CLI_VERSION=0.4.40
LANGGRAPH_API_VERSION=0.16.7
LANGGRAPH_VERSION=1.2.22
LANGCHAIN_VERSION=1.5.0
CARGO_FUZZ_VERSION=0.13.2
MDBOOK_VERSION=0.5.4
HTTPX_VERSION=0.28.1
PYTEST_VERSION=9.2.0
MYPY_VERSION=2.4.1
# Builds the Python SDK's wheel and sdist (scripts/package-sdks.sh).
BUILD_VERSION=1.6.1
PYDANTIC_AI_VERSION=2.68.0
GOOGLE_ADK_VERSION=2.13.0
DJANGO_VERSION=5.2.19
DJANGO_OIDC_PROVIDER_VERSION=0.9.0
PYJWT_VERSION=2.15.1
SLACK_SDK_VERSION=3.47.0
AIOSMTPD_VERSION=1.4.6
want_browser=false
only_run=false
want_postgres=false
want_udspy=false
want_mcp=false
want_oidc=false
want_slack=false
want_mail=false
want_openai_agents=false
want_langgraph=false
want_fuzz=false
want_sdk=false
want_ops=false
want_docs=false
for flag in "$@"; do
  case "$flag" in
    --browser) want_browser=true ;;
    --run) only_run=true ;;
    --postgres) want_postgres=true ;;
    --udspy) want_udspy=true ;;
    --mcp) want_mcp=true ;;
    --oidc) want_oidc=true ;;
    --slack) want_slack=true ;;
    --mail) want_mail=true ;;
    --openai-agents) want_openai_agents=true ;;
    --langgraph) want_langgraph=true ;;
    --fuzz) want_fuzz=true ;;
    --sdk) want_sdk=true ;;
    --ops) want_ops=true ;;
    --docs) want_docs=true ;;
    *) echo "usage: setup.sh [--run] [--browser] [--postgres] [--udspy] [--mcp] [--oidc] [--slack] [--mail] [--openai-agents] [--langgraph] [--sdk] [--ops] [--docs] [--fuzz]" >&2; exit 2 ;;
  esac
done
apt_install() {
  local sudo_cmd=""
  [[ $(id -u) -ne 0 ]] && sudo_cmd="sudo"
  $sudo_cmd apt-get update
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y "$@"
}

step() { printf '\n== %s\n' "$*"; }

# Installs packages into the Python virtual environment at $1 with uv.
venv_install() {
  local venv=$1
  shift
  if [[ "$(.venv-uv/bin/uv --version 2>/dev/null)" != "uv $UV_VERSION" ]]; then
    make_venv .venv-uv
    .venv-uv/bin/pip install --quiet "uv==$UV_VERSION"
  fi
  .venv-uv/bin/uv pip install --quiet --python "$venv/bin/python" "$@"
}

# The Python SDK into the venv at $1, editable (the bridges run this
# checkout's SDK); installed again only when its manifest changes.
sdk_into() {
  local manifest
  manifest=$(sha256sum sdk/python/pyproject.toml | cut -d' ' -f1)
  if [[ "$(cat "$1/.sdk-manifest" 2>/dev/null)" != "$manifest" ]]; then
    venv_install "$1" -e ./sdk/python
    echo "$manifest" > "$1/.sdk-manifest"
  fi
}

# A Python virtual environment at $1 (installs Debian's python3-venv if needed).
make_venv() {
  if ! python3 -m venv "$1" 2>/dev/null; then
    apt_install python3-venv
    python3 -m venv "$1"
  fi
}

# An environment of pinned PyPI packages (`name==version`...): made and
# filled again unless every one is installed at its pin.
pinned_venv() {
  local venv=$1 pin
  shift
  for pin in "$@"; do
    if [[ "$("$venv/bin/pip" show "${pin%%==*}" 2>/dev/null | sed -n 's/^Version: //p')" != "${pin#*==}" ]]; then
      make_venv "$venv"
      venv_install "$venv" "$@"
      return
    fi
  done
  echo "present"
}

step "rust: wasm target and components"
installed_targets=$(rustup target list --installed)
grep -qx wasm32-unknown-unknown <<<"$installed_targets" || rustup target add wasm32-unknown-unknown
if ! $only_run; then
  rustup component list --installed | grep -q '^rustfmt' || rustup component add rustfmt
  rustup component list --installed | grep -q '^clippy' || rustup component add clippy
fi

step "wasm-bindgen-cli $WASM_BINDGEN_VERSION"
if [[ "$(wasm-bindgen --version 2>/dev/null)" != "wasm-bindgen $WASM_BINDGEN_VERSION" ]] || ! command -v wasm-bindgen-test-runner >/dev/null; then
  # Not --locked: the registry here lacks a crate version its lockfile names.
  cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --force
else
  echo "present"
fi

$only_run && exit 0

step "trunk $TRUNK_VERSION"
if [[ "$(trunk --version 2>/dev/null)" != "trunk $TRUNK_VERSION" ]]; then
  cargo install trunk --version "$TRUNK_VERSION" --locked --force
else
  echo "present"
fi

step "wasm-split-cli $WASM_SPLIT_VERSION (cuts the release app into on-demand chunks)"
# (the tool has no --version: cargo's list of installed crates says which one it is)
if ! cargo install --list | grep -qx "wasm_split_cli_support v$WASM_SPLIT_VERSION:" || ! command -v wasm-split-cli >/dev/null; then
  cargo install wasm_split_cli_support --version "$WASM_SPLIT_VERSION" --features build-binary --locked --force
else
  echo "present"
fi

step "npm packages (binaryen 132's wasm-opt, Playwright without its browser download)"
if [[ ! -x node_modules/.bin/wasm-opt || ! -x node_modules/.bin/playwright || package-lock.json -nt node_modules/.package-lock.json ]]; then
  PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund
else
  echo "present"
fi

if $want_browser; then
  step "chromium and chromedriver (Debian)"
  if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
    apt_install chromium chromium-driver
  else
    echo "present"
  fi
fi

if $want_postgres; then
  step "PostgreSQL server and psql (Debian), and openssl for its test certificates"
  if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || ! command -v psql >/dev/null || ! command -v openssl >/dev/null; then
    apt_install postgresql postgresql-client openssl
  else
    echo "present"
  fi
fi

if $want_ops; then
  step "Prometheus and promtool, systemd-analyze, nginx, Caddy (Debian), for the metrics and deployment tests"
  if ! command -v prometheus >/dev/null || ! command -v promtool >/dev/null || ! command -v systemd-analyze >/dev/null \
    || ! command -v nginx >/dev/null || ! command -v caddy >/dev/null; then
    apt_install prometheus systemd nginx caddy
  else
    echo "present"
  fi
fi

if $want_udspy; then
  step "udspy $UDSPY_VERSION (PyPI) in .venv-udspy"
  if ! .venv-udspy/bin/python -c "import udspy, sys; sys.exit(udspy.__version__ != '$UDSPY_VERSION')" 2>/dev/null \
    || [[ "$(.venv-udspy/bin/pip show rfc8785 2>/dev/null | sed -n 's/^Version: //p')" != "$RFC8785_VERSION" ]]; then
    make_venv .venv-udspy
    venv_install .venv-udspy "udspy==$UDSPY_VERSION" \
      "cryptography==$CRYPTOGRAPHY_VERSION" "rfc8785==$RFC8785_VERSION" "httpx==$HTTPX_VERSION"
  else
    echo "present"
  fi
  sdk_into .venv-udspy
fi

if $want_mcp; then
  step "MCP Python SDK $MCP_VERSION (PyPI) in .venv-mcp"
  pinned_venv .venv-mcp "mcp==$MCP_VERSION"
fi

if $want_oidc; then
  step "django-oidc-provider $DJANGO_OIDC_PROVIDER_VERSION and Django $DJANGO_VERSION (PyPI) in .venv-oidc"
  pinned_venv .venv-oidc "django==$DJANGO_VERSION" "django-oidc-provider==$DJANGO_OIDC_PROVIDER_VERSION" \
    "pyjwt==$PYJWT_VERSION" "cryptography==$CRYPTOGRAPHY_VERSION"
fi

if $want_slack; then
  step "slack-sdk $SLACK_SDK_VERSION (PyPI) in .venv-slack"
  pinned_venv .venv-slack "slack-sdk==$SLACK_SDK_VERSION"
fi

if $want_mail; then
  step "aiosmtpd $AIOSMTPD_VERSION (PyPI) in .venv-mail"
  pinned_venv .venv-mail "aiosmtpd==$AIOSMTPD_VERSION"
fi

if $want_openai_agents; then
  step "OpenAI Agents SDK $OPENAI_AGENTS_VERSION (PyPI) in .venv-openai-agents"
  if [[ "$(.venv-openai-agents/bin/pip show openai-agents 2>/dev/null | sed -n 's/^Version: //p')" != "$OPENAI_AGENTS_VERSION" ]] \
    || [[ "$(.venv-openai-agents/bin/pip show rfc8785 2>/dev/null | sed -n 's/^Version: //p')" != "$RFC8785_VERSION" ]]; then
    make_venv .venv-openai-agents
    venv_install .venv-openai-agents "openai-agents==$OPENAI_AGENTS_VERSION" \
      "cryptography==$CRYPTOGRAPHY_VERSION" "rfc8785==$RFC8785_VERSION" "httpx==$HTTPX_VERSION"
  else
    echo "present"
  fi
  sdk_into .venv-openai-agents
fi

if $want_sdk; then
  # The root README's quickstart, run by the SDK's tests, reviews with curl.
  command -v curl >/dev/null || apt_install curl
  step "the Python SDK (sdk/python) with pytest $PYTEST_VERSION, mypy $MYPY_VERSION and its framework extras (pydantic-ai-slim $PYDANTIC_AI_VERSION, google-adk $GOOGLE_ADK_VERSION) in .venv-sdk"
  # Installed again whenever its manifest changes; its tests run on the source.
  manifest=$(sha256sum sdk/python/pyproject.toml | cut -d' ' -f1)
  if [[ "$(cat .venv-sdk/.manifest 2>/dev/null)" != "$manifest" ]] \
    || [[ "$(.venv-sdk/bin/pip show mypy 2>/dev/null | sed -n 's/^Version: //p')" != "$MYPY_VERSION" ]] \
    || [[ "$(.venv-sdk/bin/pip show pydantic-ai-slim 2>/dev/null | sed -n 's/^Version: //p')" != "$PYDANTIC_AI_VERSION" ]] \
    || [[ "$(.venv-sdk/bin/pip show google-adk 2>/dev/null | sed -n 's/^Version: //p')" != "$GOOGLE_ADK_VERSION" ]] \
    || [[ "$(.venv-sdk/bin/pip show build 2>/dev/null | sed -n 's/^Version: //p')" != "$BUILD_VERSION" ]]; then
    make_venv .venv-sdk
    venv_install .venv-sdk "httpx==$HTTPX_VERSION" \
      "cryptography==$CRYPTOGRAPHY_VERSION" "rfc8785==$RFC8785_VERSION" \
      "pytest==$PYTEST_VERSION" "mypy==$MYPY_VERSION" "pydantic-ai-slim==$PYDANTIC_AI_VERSION" \
      "google-adk==$GOOGLE_ADK_VERSION" "build==$BUILD_VERSION"
    # The SDK itself with pip, as its users install it (what it needs is there).
    .venv-sdk/bin/pip install --quiet ./sdk/python
    echo "$manifest" > .venv-sdk/.manifest
  else
    echo "present"
  fi
  step "Node.js 22 from npm (tests/node22): the TypeScript SDK package test's second runtime, and oidc-provider, the sign-in tests' OpenID provider"
  node22_lock=$(sha256sum tests/node22/package-lock.json | cut -d' ' -f1)
  if [[ "$(cat tests/node22/node_modules/.lock-sha256 2>/dev/null)" != "$node22_lock" ]]; then
    (cd tests/node22 && npm ci --no-audit --no-fund)
    echo "$node22_lock" > tests/node22/node_modules/.lock-sha256
  else
    echo "present"
  fi
  step "the TypeScript SDK's tools (sdk/typescript: TypeScript, openapi-typescript, canonicalize)"
  lock=$(sha256sum sdk/typescript/package-lock.json | cut -d' ' -f1)
  if [[ "$(cat sdk/typescript/node_modules/.lock-sha256 2>/dev/null)" != "$lock" ]]; then
    (cd sdk/typescript && npm ci --ignore-scripts --no-audit --no-fund)
    echo "$lock" > sdk/typescript/node_modules/.lock-sha256
  else
    echo "present"
  fi
fi

if $want_langgraph; then
  step "LangGraph server (langgraph-cli[inmem] $LANGGRAPH_CLI_VERSION) and langchain $LANGCHAIN_VERSION (PyPI) in .venv-langgraph"
  if [[ "$(.venv-langgraph/bin/pip show langgraph-api 2>/dev/null | sed -n 's/^Version: //p')" != "$LANGGRAPH_API_VERSION" ]] \
    || [[ "$(.venv-langgraph/bin/pip show langchain 2>/dev/null | sed -n 's/^Version: //p')" != "$LANGCHAIN_VERSION" ]] \
    || [[ ! -x .venv-langgraph/bin/langgraph ]]; then
    make_venv .venv-langgraph
    venv_install .venv-langgraph "langgraph-cli[inmem]==$LANGGRAPH_CLI_VERSION" \
      "langgraph-api==$LANGGRAPH_API_VERSION" "langgraph==$LANGGRAPH_VERSION" "langchain==$LANGCHAIN_VERSION"
  else
    echo "present"
  fi
fi

if $want_docs; then
  step "jq (Debian), which the HTTP API reference's examples use"
  if ! command -v jq >/dev/null; then
    apt_install jq
  else
    echo "present"
  fi
  step "mdBook $MDBOOK_VERSION, for the docs book"
  if [[ "$(mdbook --version 2>/dev/null)" != "mdbook v$MDBOOK_VERSION" ]]; then
    # Without the live-reload server and file watcher: the book is only built.
    cargo install mdbook --version "$MDBOOK_VERSION" --locked --no-default-features --features search --force
  else
    echo "present"
  fi
fi

if $want_fuzz; then
  step "cargo-fuzz $CARGO_FUZZ_VERSION, for fuzzing"
  if [[ "$(cargo fuzz --version 2>/dev/null)" != "cargo-fuzz $CARGO_FUZZ_VERSION" ]]; then
    cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --locked --force
  else
    echo "present"
  fi
fi
