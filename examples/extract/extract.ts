// Extract a paginated REST API (a Generic-Extractor configuration) into Storage tables.
// The configuration is the one of examples/extract-users.json: the sample API of the dev stack (`make demo` runs
// it on port 8099); for your own API change `baseUrl`, `jobs` and `outputBucket`.
import { Client, Connection } from '@temporalio/client';
import { executeExtract, loadSettings, temporalConnectionOptions } from 'sapi-temporal';

const config = {
  parameters: {
    api: {
      baseUrl: 'http://127.0.0.1:8099/',
      pagination: { method: 'response.param', responseParam: 'meta.next_cursor', queryParam: 'cursor' },
    },
    config: {
      outputBucket: 'demo-extract',
      // a secret comes from the worker's environment, never from here: "${env:SAPI_SECRET_CRM_TOKEN}" (docs/security.md)
      jobs: [{ endpoint: 'cursor/items', dataField: 'items', dataType: 'users', params: { limit: 10 } }],
    },
  },
};

const { temporal } = loadSettings();
const connection = await Connection.connect(temporalConnectionOptions(temporal).client);
try {
  const client = new Client({ connection, namespace: temporal.namespace });
  // mode `batch` (default) or `page` (every page checkpointed); load: false stages the pages without loading them
  const result = await executeExtract(client, { config, options: { mode: 'batch', incremental: false } });
  for (const table of result.tables) console.log(`${table.tableId}: ${table.rows} rows, columns ${table.columns.join(', ')}`);
  console.log(`${result.pages} pages, ${result.records} records, stop: ${JSON.stringify(result.stopReasons)}`);
} finally {
  await connection.close();
}
