#!/usr/bin/env bash
# Runs Countersign: installs what is missing, builds the app and then the server
# (whose release build carries the app), and starts `countersign serve --demo`
# on 127.0.0.1 (PORT, default 8080) with a SQLite file under data/. Opened from
# the server, the app asks for a reviewer key: paste the printed demo one.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/setup.sh
scripts/build-app.sh
cargo build --release -p countersign-server
exec target/release/countersign serve --demo --data data --listen "127.0.0.1:${PORT:-8080}"
