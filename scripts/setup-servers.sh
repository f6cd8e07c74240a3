#!/usr/bin/env bash
# Obtains the Go-built servers (Temporal CLI with its dev server + UI, MinIO) from the Go module proxy, and Temporal's
# time-skipping test server (Java, from Maven Central) for the fast tier, and caches them outside the repo.
# Idempotent: a warm cache returns in milliseconds.
set -euo pipefail

CACHE_DIR="${RCP_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/rcp}"
TEMPORAL_CLI_VERSION="v1.4.1"
MINIO_VERSION="v0.0.0-20260212201848-7aac2a2c5b7c"
# The Java SDK's test server, the one @temporalio/testing would download from GitHub (unreachable here).
TEST_SERVER_VERSION="1.31.0"
LAUNCHER_REVISION="3"
BIN="$CACHE_DIR/bin"
mkdir -p "$BIN"

log() { printf '[setup] %s\n' "$*" >&2; }
. "$(dirname "${BASH_SOURCE[0]}")/apt-install.sh"

# $1 name, $2 version: true (and linked) when the binary is cached or on PATH; otherwise says why Go is needed.
already_there() {
  if [ -x "$BIN/$1-$2" ]; then return 0; fi
  if command -v "$1" >/dev/null 2>&1; then
    ln -sf "$(command -v "$1")" "$BIN/$1-$2"; log "$1: using $(command -v "$1") from PATH"; return 0
  fi
  command -v go >/dev/null 2>&1 || { log "Go is needed once to build $1"; exit 1; }
  return 1
}

find_or_build_temporal() {
  already_there temporal "$TEMPORAL_CLI_VERSION" && return
  log "temporal: building CLI $TEMPORAL_CLI_VERSION from the Go module proxy (about 3 minutes the first time)"
  local dir src
  dir=$(go mod download -json "github.com/temporalio/cli@$TEMPORAL_CLI_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  src="$CACHE_DIR/src/temporal-cli-$TEMPORAL_CLI_VERSION"
  rm -rf "$src"; mkdir -p "$(dirname "$src")"; cp -r "$dir" "$src"; chmod -R u+w "$src"
  (cd "$src" && GOFLAGS=-mod=mod go build -o "$BIN/temporal-$TEMPORAL_CLI_VERSION.tmp" ./cmd/temporal)
  mv "$BIN/temporal-$TEMPORAL_CLI_VERSION.tmp" "$BIN/temporal-$TEMPORAL_CLI_VERSION"
  rm -rf "$src"
  log "temporal: built"
}

find_or_build_minio() {
  already_there minio "$MINIO_VERSION" && return
  log "minio: building $MINIO_VERSION from the Go module proxy (about 2 minutes the first time)"
  GOBIN="$CACHE_DIR/gobin" go install "github.com/minio/minio@$MINIO_VERSION"
  mv "$CACHE_DIR/gobin/minio" "$BIN/minio-$MINIO_VERSION"
  log "minio: built"
}

# The jars of io.temporal:temporal-test-server and a launcher that runs it as the SDK runs its own download:
# `<launcher> <port> [extra args]`. Java 17 and Maven come from Debian (apt-get install openjdk-17-jre-headless maven).
# The client compiler and the serial collector: a test run's server starts in about half the time and CPU (the SDK
# gives it 5 s to listen, several start at once on 2 cores) and never runs long enough to want more.
find_or_fetch_test_server() {
  local launcher="$BIN/temporal-test-server-$TEST_SERVER_VERSION-$LAUNCHER_REVISION" lib="$CACHE_DIR/lib/temporal-test-server-$TEST_SERVER_VERSION"
  [ -x "$launcher" ] && return
  if [ ! -d "$lib" ]; then
    if ! { command -v java >/dev/null 2>&1 && command -v mvn >/dev/null 2>&1; }; then
      # Like docker-compose and Chromium, a JRE and Maven come from Debian's packages when the machine has none.
      log "installing a JRE and Maven from apt (Temporal's test server is a Java program, fetched from Maven Central)"
      apt_install /tmp/rcp-apt-java.log openjdk-17-jre-headless maven ||
        { log "Java 17 and Maven are needed once to fetch the Temporal test server (Debian: openjdk-17-jre-headless maven; needs root and apt-get; log /tmp/rcp-apt-java.log)"; exit 1; }
    fi
    log "temporal test server: fetching $TEST_SERVER_VERSION from Maven Central (about 15 seconds the first time)"
    local pom
    pom=$(mktemp -d)
    cat >"$pom/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>rcp</groupId><artifactId>temporal-test-server-jars</artifactId><version>1</version>
  <dependencies>
    <dependency><groupId>io.temporal</groupId><artifactId>temporal-test-server</artifactId><version>$TEST_SERVER_VERSION</version></dependency>
  </dependencies>
</project>
POM
    rm -rf "$lib.tmp"
    (cd "$pom" && mvn -q -B dependency:copy-dependencies -DoutputDirectory="$lib.tmp" >&2)
    rm -rf "$pom"; mv "$lib.tmp" "$lib"
    log "temporal test server: fetched"
  fi
  # The classes a start loads, archived once (class data sharing): a start then reads them mapped instead of parsing
  # 39 jars, about a third less CPU. -Xshare:auto runs without it when it is missing or stale.
  local jsa="$lib.jsa" flags="-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
  if [ ! -f "$jsa" ]; then
    local port=$((20000 + RANDOM % 20000)) pid
    # shellcheck disable=SC2086
    java $flags -XX:ArchiveClassesAtExit="$jsa.tmp" -cp "$lib/*" io.temporal.testserver.TestServer "$port" >/dev/null 2>&1 &
    pid=$!
    for _ in $(seq 1 600); do (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
    kill "$pid"; wait "$pid" 2>/dev/null || true
    if [ -s "$jsa.tmp" ]; then mv "$jsa.tmp" "$jsa"; else rm -f "$jsa.tmp"; log "temporal test server: no class archive (starts slower)"; fi
  fi
  printf '#!/bin/sh\n# Temporal %s time-skipping test server: <port> [extra args]\nexec java %s -XX:SharedArchiveFile="%s" -Xshare:auto -cp "%s/*" io.temporal.testserver.TestServer "$@"\n' \
    "$TEST_SERVER_VERSION" "$flags" "$jsa" "$lib" >"$launcher.tmp"
  chmod +x "$launcher.tmp"; mv "$launcher.tmp" "$launcher"
}

case "${1:-all}" in
  temporal) find_or_build_temporal ;;
  minio) find_or_build_minio ;;
  test-server) find_or_fetch_test_server; printf '%s\n' "$BIN/temporal-test-server-$TEST_SERVER_VERSION-$LAUNCHER_REVISION"; exit 0 ;;
  # The two servers the API runs against (scripts/servers/binaries.ts reads these two lines); the fast tier asks for
  # the test server on its own.
  all) find_or_build_temporal; find_or_build_minio ;;
esac
printf '%s\n' "$BIN/temporal-$TEMPORAL_CLI_VERSION" "$BIN/minio-$MINIO_VERSION"
