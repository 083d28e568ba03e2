#!/usr/bin/env bash
# Temporal's schema on PostgreSQL and the namespace the workers use. The temporal-admin-tools service runs
# `admin-tools.sh serve`; deploy/native-check.sh runs `schema` and `namespace` with binaries of its own.
#   schema     create the two databases if missing, set up and upgrade their schema (idempotent: restarting the
#              service after bumping the image tags is how the schema is upgraded), then touch $SCHEMA_READY_FILE
#   namespace  wait for the frontend, create $TEMPORAL_NAMESPACE (retention $TEMPORAL_NAMESPACE_RETENTION) if missing
#   serve      schema, then namespace in the background, then stay up as the operators' toolbox
#              (`docker compose exec temporal-admin-tools temporal workflow list`)
set -euo pipefail

: "${POSTGRES_SEEDS:?set POSTGRES_SEEDS (the PostgreSQL host)}"
: "${POSTGRES_USER:?set POSTGRES_USER}"
: "${POSTGRES_PWD:?set POSTGRES_PWD}"
DB_PORT=${DB_PORT:-5432}
DBNAME=${DBNAME:-temporal}
VISIBILITY_DBNAME=${VISIBILITY_DBNAME:-temporal_visibility}
SQL_TOOL=${TEMPORAL_SQL_TOOL:-temporal-sql-tool}
TEMPORAL_CLI=${TEMPORAL_CLI:-temporal}
SCHEMA_DIR=${TEMPORAL_SCHEMA_DIR:-/etc/temporal/schema}/postgresql/v12
SCHEMA_READY_FILE=${SCHEMA_READY_FILE:-/tmp/schema-ready}
TEMPORAL_ADDRESS=${TEMPORAL_ADDRESS:-temporal:7233}
TEMPORAL_NAMESPACE=${TEMPORAL_NAMESPACE:-default}
TEMPORAL_NAMESPACE_RETENTION=${TEMPORAL_NAMESPACE_RETENTION:-72h}

sql_tool() {
  SQL_PASSWORD="$POSTGRES_PWD" "$SQL_TOOL" --plugin postgres12 --ep "$POSTGRES_SEEDS" -p "$DB_PORT" -u "$POSTGRES_USER" "$@"
}

setup_database() { # <database> <schema folder: temporal | visibility>
  local db=$1 kind=$2 tries=0
  # the server may be healthy before it accepts this user over TCP: retry the first connection for a minute
  until PGPASSWORD="$POSTGRES_PWD" psql -h "$POSTGRES_SEEDS" -p "$DB_PORT" -U "$POSTGRES_USER" -d postgres -Atc 'select 1' >/dev/null 2>&1; do
    tries=$((tries + 1))
    if [ "$tries" -ge 60 ]; then echo "PostgreSQL at $POSTGRES_SEEDS:$DB_PORT refuses $POSTGRES_USER after 60 s" >&2; return 1; fi
    sleep 1
  done
  if [ -z "$(PGPASSWORD="$POSTGRES_PWD" psql -h "$POSTGRES_SEEDS" -p "$DB_PORT" -U "$POSTGRES_USER" -d postgres -Atc \
      "select 1 from pg_database where datname = '$db'")" ]; then
    sql_tool --db "$db" create-database
  fi
  sql_tool --db "$db" setup-schema -v 0.0          # no-op on a database that has its schema version table
  sql_tool --db "$db" update-schema -d "$SCHEMA_DIR/$kind/versioned"
}

schema() {
  setup_database "$DBNAME" temporal
  setup_database "$VISIBILITY_DBNAME" visibility
  touch "$SCHEMA_READY_FILE"
  echo "Temporal schema ready in $DBNAME and $VISIBILITY_DBNAME"
}

namespace() {
  until "$TEMPORAL_CLI" operator cluster health --address "$TEMPORAL_ADDRESS" 2>/dev/null | grep -q SERVING; do sleep 2; done
  if ! "$TEMPORAL_CLI" operator namespace describe --address "$TEMPORAL_ADDRESS" --namespace "$TEMPORAL_NAMESPACE" >/dev/null 2>&1; then
    "$TEMPORAL_CLI" operator namespace create --address "$TEMPORAL_ADDRESS" --namespace "$TEMPORAL_NAMESPACE" \
      --retention "$TEMPORAL_NAMESPACE_RETENTION" --description "sapi-temporal workflows"
  fi
  echo "namespace $TEMPORAL_NAMESPACE ready at $TEMPORAL_ADDRESS"
}

case "${1:-serve}" in
  schema) schema ;;
  namespace) namespace ;;
  serve)
    rm -f "$SCHEMA_READY_FILE"
    schema
    namespace &
    exec sleep infinity
    ;;
  *) echo "usage: $0 [serve|schema|namespace]" >&2; exit 2 ;;
esac
