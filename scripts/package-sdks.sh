#!/usr/bin/env bash
# Builds the SDKs' packages, ready to publish, into one folder (default
# target/packages): the Python SDK's wheel and sdist (`python -m build`, from
# .venv-sdk: scripts/setup.sh --sdk) and the TypeScript SDK's npm tarball
# (`npm pack`, which compiles it). Publishing is then `twine upload` of the
# first two and `npm publish` of the tarball (docs/python.md, docs/typescript.md).
# Usage: scripts/package-sdks.sh [out-dir]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=$(realpath -m "${1:-target/packages}")
mkdir -p "$out"
.venv-sdk/bin/python -m build --sdist --wheel --outdir "$out" sdk/python >/dev/null
(cd sdk/typescript && npm pack --pack-destination "$out" >/dev/null)
ls -1 "$out"
