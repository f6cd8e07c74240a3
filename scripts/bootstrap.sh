#!/usr/bin/env bash
# Makes a checkout runnable: npm packages, the Go-built servers, docker-compose (to validate the compose
# file). Idempotent and quick when nothing changed, so ./scripts/up and ./scripts/test always call it.
# --fast: only what the fast tier needs (npm packages, the time-skipping test server).
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '[setup] %s\n' "$*" >&2; }
. scripts/apt-install.sh

# npm writes node_modules/.package-lock.json last; a newer package-lock.json means the install is stale.
if [ ! -d node_modules ] || [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  log "installing npm packages (npm ci)"
  npm_log=$(mktemp)
  if ! npm ci --no-audit --no-fund >"$npm_log" 2>&1; then
    # npm ci refuses a lock file that lacks entries for optional platform packages the registry could not
    # serve when it was written; npm install still takes every pinned version from the lock file.
    log "npm ci refused (output in $npm_log); retrying with npm install"
    npm install --no-audit --no-fund
  else
    rm -f "$npm_log"
  fi
  log "npm packages installed"
fi

# Temporal's time-skipping test server (Java), for the workflow tests of the fast tier (test/unit/workflows).
if ! bash scripts/setup-servers.sh test-server >/dev/null; then
  log "warning: could not fetch the Temporal test server (needs Java 17 and Maven); test/unit/workflows will fail"
fi
# --fast (./scripts/test --fast): nothing else is needed by the fast tier.
if [ "${1:-}" = --fast ]; then exit 0; fi

if ! command -v docker-compose >/dev/null 2>&1; then
  log "installing docker-compose from apt (used to validate docker-compose.yml)"
  if apt_install /tmp/rcp-apt-docker-compose.log docker-compose; then
    log "docker-compose installed"
  else
    log "warning: could not install docker-compose (needs root and apt-get; log /tmp/rcp-apt-docker-compose.log); test/compose.test.ts will fail"
  fi
fi

# The console (api/console/ui): its API types from the app's OpenAPI document, then its bundle; nothing built is
# committed, so both commands build it (about 2 s).
node_modules/.bin/bun scripts/build-console.ts

bash scripts/setup-servers.sh all >/dev/null
bash scripts/setup-schemathesis.sh >/dev/null
log "ready: npm packages, the console, Temporal CLI and MinIO binaries, the schema fuzzer"
