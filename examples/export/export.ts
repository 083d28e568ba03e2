// Export a Storage table to a file on the worker's host, following its progress while it runs.
import { Client, Connection } from '@temporalio/client';
import { loadSettings, startExport, temporalConnectionOptions, type TransferProgress } from 'sapi-temporal';

// on the worker's host, under its SAPI_LOCAL_ROOTS (or s3://bucket/key under SAPI_ALLOWED_OBJECT_PREFIXES)
const DESTINATION = '/srv/drop/orders-export.csv';

const { temporal } = loadSettings();
const connection = await Connection.connect(temporalConnectionOptions(temporal).client);
try {
  const client = new Client({ connection, namespace: temporal.namespace });
  const handle = await startExport(client, { tableId: 'in.c-examples.orders', destination: DESTINATION, overwrite: true });
  console.log(`started ${handle.workflowId}`);
  const timer = setInterval(() => {
    handle
      .query<TransferProgress>('progress')
      .then((progress) => console.log(`${progress.phase}: ${progress.bytes} bytes`))
      .catch(() => undefined); // the run may have ended between two polls
  }, 1000);
  try {
    const result = await handle.result();
    console.log(`${result.bytes} bytes to ${result.path} (${result.sliced ? `${result.slices} slices` : 'one file'}), sha256 ${result.sha256}`);
  } finally {
    clearInterval(timer);
  }
} finally {
  await connection.close();
}
