// Import a CSV into a new Storage table and wait for the result.
// Run against the dev stack (`make dev`, then `set -a; . ./.env.dev; set +a`) with a worker polling `sapi-temporal`.
import { Client, Connection } from '@temporalio/client';
import { executeImport, loadSettings, temporalConnectionOptions } from 'sapi-temporal';

// a CSV on the worker's host, under its SAPI_LOCAL_ROOTS (the dev stack allows the folder it was started in), or an
// https:// URL, or s3://bucket/key under SAPI_ALLOWED_OBJECT_PREFIXES
const SOURCE = '/srv/drop/orders.csv';

const { temporal } = loadSettings(); // TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS_*, …
const connection = await Connection.connect(temporalConnectionOptions(temporal).client);
try {
  const client = new Client({ connection, namespace: temporal.namespace });
  const result = await executeImport(client, {
    source: SOURCE,
    bucketId: 'in.c-examples',
    createBucket: true,
    table: 'orders',
    mode: 'create', // a new table; `load` (with `incremental: true` to append) loads into an existing one
    primaryKey: ['id'],
  });
  console.log(`${result.importedRowsCount} rows into ${result.tableId} (file ${result.fileId}, job ${result.jobId}, sha256 ${result.sha256})`);
} finally {
  await connection.close();
}
