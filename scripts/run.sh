#!/usr/bin/env bash
# Runs Countersign: installs what is missing, builds the app and the server, and
# starts `countersign serve --demo` on 127.0.0.1 (PORT, default 8080) with a
# SQLite file under data/. The app opens on its embedded local-storage demo; the
# printed reviewer key connects it to the server (Settings > Storage).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/setup.sh
scripts/build-app.sh
cargo build --release -p countersign-server
exec target/release/countersign serve --demo --app-dir dist --data data --listen "127.0.0.1:${PORT:-8080}"
