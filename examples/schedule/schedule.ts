// A Temporal Schedule that loads a CSV into an existing table every night at 03:00 UTC (appending), the way
// `sapi-temporal schedule import` creates one: imports never overlap (a run that comes due while the previous one
// still runs waits for it: BUFFER_ONE), and runs missed while the server was down are caught up.
import { Client, Connection, ScheduleOverlapPolicy } from '@temporalio/client';
import { DEFAULT_TASK_QUEUE, loadSettings, temporalConnectionOptions, type ImportTableInput } from 'sapi-temporal';

const input: ImportTableInput = {
  source: 's3://landing/orders.csv', // under the worker's SAPI_ALLOWED_OBJECT_PREFIXES
  bucketId: 'in.c-examples',
  table: 'orders', // must exist: a recurring import loads (mode `load`)
  mode: 'load',
  incremental: true,
};

const { temporal } = loadSettings();
const connection = await Connection.connect(temporalConnectionOptions(temporal).client);
try {
  const client = new Client({ connection, namespace: temporal.namespace });
  const handle = await client.schedule.create({
    scheduleId: 'nightly-orders',
    spec: { cronExpressions: ['0 3 * * *'] },
    action: { type: 'startWorkflow', workflowType: 'importTableWorkflow', taskQueue: DEFAULT_TASK_QUEUE, args: [input] },
    policies: { overlap: ScheduleOverlapPolicy.BUFFER_ONE, catchupWindow: '1 day' },
  });
  console.log(`schedule ${handle.scheduleId} created; see it with: sapi-temporal schedule describe ${handle.scheduleId}`);
} finally {
  await connection.close();
}
