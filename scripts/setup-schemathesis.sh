#!/usr/bin/env bash
# The schema fuzzer (PyPI schemathesis, pinned with its dependencies in schemathesis-requirements.txt) in a virtual
# environment outside the repository. Idempotent: a venv built from the same requirements is reused at once.
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE_DIR="${RCP_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/rcp}"
REQ=scripts/schemathesis-requirements.txt
VENV="$CACHE_DIR/venv-schemathesis-$(sha256sum "$REQ" | cut -c1-12)"
# A venv cannot be moved once built (its scripts name their own path), so completion is marked by a stamp.
if [ ! -f "$VENV/.complete" ]; then
  command -v python3 >/dev/null 2>&1 || { echo "[setup] python3 is needed for the schema fuzzer" >&2; exit 1; }
  echo "[setup] schemathesis: installing into $VENV (once)" >&2
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check --no-deps -r "$REQ"
  touch "$VENV/.complete"
fi
printf '%s\n' "$VENV/bin/schemathesis"
