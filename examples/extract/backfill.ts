// Backfill an extraction over past date windows: one child extractWorkflow per week, four at a time, each reading its
// window as {"attr": "backfill.from"} / {"attr": "backfill.to"} (the configuration of examples/backfill-events.json:
// the sample API of the dev stack, `make demo` runs it on port 8099). The live run state of `stateKey` is left alone;
// `advanceState: true` would store it once at the end (previousStart = `to`).
import { Client, Connection } from '@temporalio/client';
import { executeBackfill, loadSettings, temporalConnectionOptions } from 'sapi-temporal';

const config = {
  parameters: {
    api: {
      baseUrl: 'http://127.0.0.1:8099/',
      pagination: { method: 'response.param', responseParam: 'next_page', queryParam: 'page', includeParams: true },
    },
    config: {
      outputBucket: 'demo-events',
      incrementalOutput: true, // every window loads into the same table
      jobs: [{ endpoint: 'events', dataField: 'events', params: { from: { attr: 'backfill.from' }, to: { attr: 'backfill.to' } } }],
    },
  },
};

const { temporal } = loadSettings();
const connection = await Connection.connect(temporalConnectionOptions(temporal).client);
try {
  const client = new Client({ connection, namespace: temporal.namespace });
  const result = await executeBackfill(
    client,
    { kind: 'extract', extract: { config, stateKey: 'events' }, from: '2025-01-01', to: '2025-03-01', window: 'P7D', parallel: 4 },
    // a fixed id: after a failure, the same call runs only the windows not done
    { workflowId: 'backfill-events-2025-q1', taskQueue: temporal.taskQueue },
  );
  console.log(`${result.done} of ${result.windows} windows, ${result.rows} rows (${result.alreadyDone} done before)`);
  for (const w of result.perWindow) console.log(`${w.label} ${w.from}..${w.to}: ${w.state}, ${w.rows ?? '-'} rows`);
} finally {
  await connection.close();
}
