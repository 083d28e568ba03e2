#!/usr/bin/env bash
# The compose topology run natively, without Docker, to check what the build machines cannot start in containers:
# PostgreSQL (Debian's package) -> Temporal's schema set up by deploy/temporal/admin-tools.sh (the admin-tools
# service's script, run twice: the second run is the restart/upgrade path) -> Temporal's full server (built with
# `go install` at the compose file's version) on it, with its Prometheus endpoint -> the namespace -> MinIO + the
# Storage API emulator (the dev profile) -> two workers from a production install of the package (what the image
# holds: `npm install --omit=dev`, lib/ compiled, bin/) -> the image's worker health check -> one import, then a second
# one after one worker is killed.
#
#   bash deploy/native-check.sh          # prints each step with its time, exits 0 when every check passed
#
# Not part of `make test`: a first run builds Temporal (minutes, GBs of Go caches) and the whole run takes a minute
# or two. Needs: go, node, npm, PostgreSQL's server binaries (apt-get install -y postgresql), the `temporal` CLI and
# `minio` (PATH or .tools/, `make tools`). Runs PostgreSQL as the `postgres` user when started as root.
# Overrides: NATIVE_DIR (work folder, default /tmp/sapi-native), NATIVE_PORT_BASE (default 17000), TEMPORAL_BIN_DIR
# (existing `server` and `sql` binaries), APP_DIR (an existing production install), KEEP=1 (leave things running).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
work=${NATIVE_DIR:-/tmp/sapi-native}
base=${NATIVE_PORT_BASE:-17000}
pg_port=$((base + 432)) fe_port=$((base + 233)) metrics_port=$((base + 800)) minio_port=$((base + 900)) emu_port=$((base + 80))
version=$(sed -n 's|^ *image: temporalio/server:\(.*\)$|\1|p' "$repo/docker-compose.yml")
queue="sapi-native-$$"
pg_password=native-pg-secret
token=native-sapi-token
started=$(date +%s)
pids=()

step() { printf '[%4ss] %s\n' $(($(date +%s) - started)) "$*"; }
fail() { echo "FAILED: $*" >&2; exit 1; }
wait_for() { # <seconds> <description> <command...>
  local seconds=$1 what=$2; shift 2
  for _ in $(seq "$seconds"); do "$@" >/dev/null 2>&1 && return 0; sleep 1; done
  fail "$what not ready after ${seconds}s (logs in $work/logs)"
}
as_postgres() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
cleanup() {
  [ "${KEEP:-0}" = 1 ] && { echo "left running (KEEP=1): pids ${pids[*]}, PostgreSQL in $work/pg"; return; }
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -n "${pg_bin:-}" ] && as_postgres "$pg_bin/pg_ctl" -D "$work/pg" -m fast stop >/dev/null 2>&1 || true
}
trap cleanup EXIT

rm -rf "$work/pg" "$work/pgsock" "$work/minio" "$work/emulator" "$work/logs" "$work/temporal" "$work/workers"
mkdir -p "$work/logs" "$work/temporal/config" "$work/workers" "$work/pgsock"

# ---- tools ------------------------------------------------------------------------------------------------------
step "Temporal server $version"
bin=${TEMPORAL_BIN_DIR:-$work/bin}
if [ ! -x "$bin/server" ] || [ ! -x "$bin/sql" ] || ! "$bin/server" --version | grep -q "${version}$"; then
  step "building it: go install go.temporal.io/server/cmd/server@v$version (+ cmd/tools/sql)"
  mkdir -p "$bin"
  GOBIN=$bin go install "go.temporal.io/server/cmd/server@v$version" "go.temporal.io/server/cmd/tools/sql@v$version"
fi
schema_dir=$(go env GOMODCACHE)/go.temporal.io/server@v$version/schema
[ -d "$schema_dir/postgresql/v12" ] || GOFLAGS=-mod=mod go mod download "go.temporal.io/server@v$version"
temporal_cli=$(command -v temporal || echo "$repo/.tools/python/bin/temporal")
minio_bin=$(command -v minio || echo "$repo/.tools/bin/minio")
[ -x "$temporal_cli" ] || fail "no temporal CLI (make tools)"
[ -x "$minio_bin" ] || fail "no minio (make tools)"
pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -n "$pg_bin" ] || fail "no PostgreSQL server: apt-get install -y postgresql"

# ---- PostgreSQL ---------------------------------------------------------------------------------------------------
step "PostgreSQL $("$pg_bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$pg_port"
mkdir -p "$work/pg"
touch "$work/logs/postgresql.log"
[ "$(id -u)" = 0 ] && chown postgres "$work/pg" "$work/pgsock" "$work/logs/postgresql.log"
as_postgres "$pg_bin/initdb" -D "$work/pg" -U postgres --auth-local=trust --auth-host=scram-sha-256 >"$work/logs/initdb.log"
as_postgres "$pg_bin/pg_ctl" -D "$work/pg" -l "$work/logs/postgresql.log" -w \
  -o "-p $pg_port -k $work/pgsock -c listen_addresses=127.0.0.1" start >/dev/null
as_postgres "$pg_bin/psql" -h "$work/pgsock" -p "$pg_port" -U postgres -qc \
  "CREATE ROLE temporal LOGIN CREATEDB PASSWORD '$pg_password'"
wait_for 30 PostgreSQL "$pg_bin/pg_isready" -h 127.0.0.1 -p "$pg_port" -U temporal -d postgres

# ---- schema (the admin-tools service's script) ---------------------------------------------------------------------
export POSTGRES_SEEDS=127.0.0.1 DB_PORT=$pg_port POSTGRES_USER=temporal POSTGRES_PWD=$pg_password
export TEMPORAL_SQL_TOOL=$bin/sql TEMPORAL_SCHEMA_DIR=$schema_dir SCHEMA_READY_FILE=$work/schema-ready
export TEMPORAL_CLI=$temporal_cli TEMPORAL_ADDRESS=127.0.0.1:$fe_port TEMPORAL_NAMESPACE=default
step "schema: deploy/temporal/admin-tools.sh schema"
bash "$repo/deploy/temporal/admin-tools.sh" schema >"$work/logs/schema-1.log" 2>&1 || fail "schema setup (logs/schema-1.log)"
step "schema again (a restart of the admin tools; must be a no-op)"
bash "$repo/deploy/temporal/admin-tools.sh" schema >"$work/logs/schema-2.log" 2>&1 || fail "schema re-run (logs/schema-2.log)"
[ -f "$work/schema-ready" ] || fail "no ready marker"
tables=$(PGPASSWORD=$pg_password psql -h 127.0.0.1 -p "$pg_port" -U temporal -d temporal -Atc \
  "select count(*) from information_schema.tables where table_schema = 'public'")
schema_version=$(PGPASSWORD=$pg_password psql -h 127.0.0.1 -p "$pg_port" -U temporal -d temporal -Atc "select curr_version from schema_version")
step "  temporal database: $tables tables, schema version $schema_version"

# ---- Temporal server ---------------------------------------------------------------------------------------------
cat >"$work/temporal/config/native.yaml" <<EOF
log: { stdout: true, level: warn }
persistence:
  defaultStore: default
  visibilityStore: visibility
  numHistoryShards: 4
  datastores:
    default:
      sql: { pluginName: postgres12, databaseName: temporal, connectAddr: "127.0.0.1:$pg_port", connectProtocol: tcp,
             user: temporal, password: "$pg_password", maxConns: 20, maxIdleConns: 20, maxConnLifetime: 1h }
    visibility:
      sql: { pluginName: postgres12, databaseName: temporal_visibility, connectAddr: "127.0.0.1:$pg_port", connectProtocol: tcp,
             user: temporal, password: "$pg_password", maxConns: 10, maxIdleConns: 10, maxConnLifetime: 1h }
global:
  membership: { maxJoinDuration: 30s, broadcastAddress: 127.0.0.1 }
  metrics:
    prometheus: { framework: tally, timerType: histogram, listenAddress: "127.0.0.1:$metrics_port" }
services:
  frontend: { rpc: { grpcPort: $fe_port, membershipPort: $((base + 933)), httpPort: $((base + 243)), bindOnLocalHost: true } }
  history: { rpc: { grpcPort: $((base + 234)), membershipPort: $((base + 934)), bindOnLocalHost: true } }
  matching: { rpc: { grpcPort: $((base + 235)), membershipPort: $((base + 935)), bindOnLocalHost: true } }
  worker: { rpc: { grpcPort: $((base + 239)), membershipPort: $((base + 939)), bindOnLocalHost: true } }
clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: active
  currentClusterName: active
  clusterInformation:
    active: { enabled: true, initialFailoverVersion: 1, rpcName: frontend, rpcAddress: "127.0.0.1:$fe_port" }
dcRedirectionPolicy: { policy: noop }
dynamicConfigClient: { filepath: "$repo/deploy/temporal/dynamicconfig.yaml", pollInterval: 60s }
EOF
step "Temporal server on 127.0.0.1:$fe_port (metrics :$metrics_port)"
"$bin/server" --root "$work/temporal" --config config --env native start >"$work/logs/temporal.log" 2>&1 &
pids+=($!)
t0=$(date +%s)
wait_for 120 "Temporal frontend" sh -c "'$temporal_cli' operator cluster health --address 127.0.0.1:$fe_port | grep -q SERVING"
step "  serving after $(($(date +%s) - t0)) s"
step "namespace: deploy/temporal/admin-tools.sh namespace"
timeout 120 bash "$repo/deploy/temporal/admin-tools.sh" namespace >"$work/logs/namespace.log" 2>&1 || fail "namespace (logs/namespace.log)"
# the compose file's health check of the temporal service
wait_for 30 "namespace describe" "$temporal_cli" operator namespace describe --address "127.0.0.1:$fe_port" --namespace default
metric_lines=$(curl -fsS "http://127.0.0.1:$metrics_port/metrics" | grep -c '^[a-z]' || true)
[ "$metric_lines" -gt 0 ] || fail "no Prometheus metrics on :$metrics_port"
step "  Prometheus endpoint: $metric_lines samples"

# ---- the dev profile: MinIO + emulator -----------------------------------------------------------------------------
export MINIO_ROOT_USER=native-minio MINIO_ROOT_PASSWORD=native-minio-secret
step "MinIO on 127.0.0.1:$minio_port"
"$minio_bin" server "$work/minio" --address "127.0.0.1:$minio_port" --console-address "127.0.0.1:$((minio_port + 1))" \
  >"$work/logs/minio.log" 2>&1 &
pids+=($!)
wait_for 60 MinIO curl -fsS "http://127.0.0.1:$minio_port/minio/health/live"

# ---- the image's contents: a production install of the package --------------------------------------------------
app=${APP_DIR:-$work/app}
if [ -z "${APP_DIR:-}" ]; then
  step "production install of the package in $app (npm install --omit=dev, lib/ compiled, bin/) as in the Dockerfile"
  rm -rf "$app" && mkdir -p "$app"
  git -C "$repo" archive HEAD package.json package-lock.json tsconfig.json tsconfig.build.json src bin | tar -x -C "$app"
  mkdir -p "$app/deploy" && cp "$repo/deploy/worker-healthcheck.js" "$app/deploy/"
  (cd "$app" && npm install --omit=dev --ignore-scripts --no-audit --no-fund >"$work/logs/npm.log" 2>&1)
  # as the Dockerfile: only this platform's Temporal core bridge library
  find "$app/node_modules/@temporalio/core-bridge/releases" -mindepth 1 -maxdepth 1 ! -name "$(uname -m)-unknown-linux-gnu" -exec rm -rf {} +
  (cd "$app" && "$repo/node_modules/.bin/tsc" -p tsconfig.build.json --noCheck) # the type check is the build's job
  step "  node_modules: $(du -sh "$app/node_modules" | cut -f1)"
fi
cli=("$app/bin/sapi-temporal")

step "Storage API emulator on 127.0.0.1:$emu_port"
AWS_ENDPOINT_URL_S3=http://127.0.0.1:$minio_port AWS_REGION=us-east-1 AWS_ACCESS_KEY_ID=$MINIO_ROOT_USER \
  AWS_SECRET_ACCESS_KEY=$MINIO_ROOT_PASSWORD SAPI_EMULATOR_BUCKET=sapi-files SAPI_EMULATOR_ADMIN_TOKEN=native-admin \
  "${cli[@]}" emulator --host 127.0.0.1 --port "$emu_port" --data-dir "$work/emulator" --token "$token" \
  >"$work/logs/emulator.log" 2>&1 &
pids+=($!)
# the compose file's emulator health check
wait_for 60 emulator node -e "fetch('http://127.0.0.1:$emu_port/v2/storage').then((r) => process.exit(r.status < 500 ? 0 : 1), () => process.exit(1))"

# ---- two workers -----------------------------------------------------------------------------------------------------
export TEMPORAL_TASK_QUEUE=$queue
for n in 1 2; do
  step "worker $n on task queue $queue"
  SAPI_URL=http://127.0.0.1:$emu_port SAPI_TOKEN=$token AWS_ENDPOINT_URL_S3=http://127.0.0.1:$minio_port AWS_REGION=us-east-1 \
    SAPI_WORK_DIR=$work/workers/$n SAPI_LOG_LEVEL=WARN "${cli[@]}" worker >"$work/logs/worker-$n.log" 2>&1 &
  pids+=($!)
done
worker_pids=("${pids[@]: -2}")
for n in 1 2; do wait_for 90 "worker $n" grep -q 'worker polling' "$work/logs/worker-$n.log"; done
# the image's HEALTHCHECK (both workers share this host name: it passes when either polls)
wait_for 30 "worker health check" node "$app/deploy/worker-healthcheck.js"
step "  health check: $(node "$app/deploy/worker-healthcheck.js")"
pollers=$("$temporal_cli" task-queue describe --address "127.0.0.1:$fe_port" --task-queue "$queue" -o json \
  | node -e "const d=JSON.parse(require('fs').readFileSync(0,'utf8')); const ids=new Set(JSON.stringify(d).match(/\"identity\":\"[^\"]+\"/g)); console.log(ids.size)")
step "  pollers on $queue: $pollers distinct identities"
[ "$pollers" -ge 2 ] || fail "expected two workers polling, saw $pollers"

# ---- imports ---------------------------------------------------------------------------------------------------------
csv=$work/orders.csv
node -e "let s='id,customer,amount\n'; for (let i = 1; i <= 100000; i++) s += i + ',customer-' + (i % 997) + ',' + (i * 7 % 1000) + '.50\n'; require('fs').writeFileSync('$csv', s)"
import_one() { # <table>
  SAPI_URL=http://127.0.0.1:$emu_port SAPI_TOKEN=$token "${cli[@]}" import "$csv" --bucket in.c-native --table "$1" \
    --create-bucket --json --address "127.0.0.1:$fe_port"
}
step "import of $(du -h "$csv" | cut -f1) / 100,000 rows through the two workers"
t0=$(date +%s%N)
import_one orders >"$work/logs/import-1.json" 2>"$work/logs/import-1.err" || fail "import (logs/import-1.err)"
step "  $(tr -d '\n' <"$work/logs/import-1.json" | cut -c1-300) in $((($(date +%s%N) - t0) / 1000000)) ms"
grep -q '"importedRowsCount": *100000' "$work/logs/import-1.json" || fail "import result lacks importedRowsCount 100000"

step "kill worker 1 (SIGKILL), import again through worker 2"
kill -9 "${worker_pids[0]}"
t0=$(date +%s%N)
import_one orders_again >"$work/logs/import-2.json" 2>"$work/logs/import-2.err" || fail "second import (logs/import-2.err)"
step "  $(tr -d '\n' <"$work/logs/import-2.json" | cut -c1-300) in $((($(date +%s%N) - t0) / 1000000)) ms"
grep -q '"importedRowsCount": *100000' "$work/logs/import-2.json" || fail "second import result lacks importedRowsCount 100000"

step "PASSED: Temporal $version on PostgreSQL, two workers, imports exact (logs in $work/logs)"
