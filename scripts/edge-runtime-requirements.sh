#!/usr/bin/env bash
# Regenerates the hash-pinned requirements the edge packages carry (activities/edge-package/runtime/requirements/)
# and the tests' own (test/edge-packages/requirements/) from their .in files. pip-tools lives in a cache venv, never
# in the repository. The .txt files list the hashes of every published file of each pinned version, so one file
# installs with --require-hashes on amd64 and arm64 alike.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="${HOME}/.cache/rcp/venv-piptools"
[ -x "$venv/bin/pip-compile" ] || { python3 -m venv "$venv" && "$venv/bin/pip" install -q pip-tools==7.4.1; }
for input in "$root"/activities/edge-package/runtime/requirements/*.in "$root"/test/edge-packages/requirements/*.in; do
  (cd "$(dirname "$input")" && "$venv/bin/pip-compile" --quiet --generate-hashes --strip-extras --no-header \
    --no-emit-find-links --annotation-style=line --resolver=backtracking \
    --output-file "$(basename "$input" .in).txt" "$(basename "$input")")
done
