/**
 * What an operator finds with Temporal's own tools (issue 23, items 1 and 2): runs searchable by table, operation,
 * API host and phase (`temporal workflow list --query`, `sapi-temporal list`), a summary and details at start,
 * current details while running, a summary on every activity call; and a namespace without the search attributes
 * registered, where runs go on unsearchable with one warning.
 */
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { createSampleApi, type SampleApi } from '../../../src/sample-api';
import type { ExtractInput, ExtractResult } from '../../../src/contracts/extract';
import { registerCommand } from '../../../src/contracts/search-attributes';
import { startTemporal, type TemporalHandle } from '../../../src/dev/temporal';
import { decodeFirst, historyShape } from '../../harness/history';
import { eventually, runCli, spawnTs, waitForLine } from '../../harness/processes';
import { startPaused } from '../../harness/start-paused';
import { startSapiTestEnv, type SapiTestEnv } from '../../harness/sapi-env';
import { testStack, uniqueTaskQueue } from '../../harness/stack-state';
import { FAST_FETCH, sampleConfig } from '../extract/support';

const EventType = temporal.api.enums.v1.EventType;

/** The real CLI in a child process, against the test stack's Temporal (Temporal variables only). */
const cli = (args: string[], env: NodeJS.ProcessEnv) => runCli(args, { SAPI_URL: undefined, SAPI_TOKEN: undefined, ...env });

/** The summaries of the activities and timers the run scheduled, in history order. */
async function scheduledSummaries(handle: WorkflowHandle): Promise<{ activities: Array<[string, string | undefined]>; markers: number; upserts: number }> {
  const events = (await handle.fetchHistory()).events ?? [];
  const activities: Array<[string, string | undefined]> = [];
  for (const event of events) {
    if (event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED) {
      activities.push([
        event.activityTaskScheduledEventAttributes?.activityType?.name ?? '',
        decodeFirst<string>({ payloads: event.userMetadata?.summary ? [event.userMetadata.summary] : [] }),
      ]);
    }
  }
  return {
    activities,
    markers: events.filter((e) => e.eventType === EventType.EVENT_TYPE_MARKER_RECORDED).length,
    // the SDK upserts TemporalChangeVersion for its patches itself: count the plugin's own
    upserts: events.filter((e) =>
      Object.keys(e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields ?? {}).some((name) => name.startsWith('Sapi')),
    ).length,
  };
}

/** The run's current details, as the UI asks for them (the SDK's built-in metadata query). */
async function currentDetails(handle: WorkflowHandle): Promise<string> {
  const metadata = await handle.query<{ currentDetails?: string }>('__temporal_workflow_metadata');
  return metadata.currentDetails ?? '';
}

/** The ids of the runs a visibility query finds (visibility lags a little: asked until `expected` shows up). */
async function listed(client: Client, query: string, expected: string[]): Promise<string[]> {
  let ids: string[] = [];
  await eventually(
    async () => {
      ids = [];
      for await (const execution of client.workflow.list({ query })) ids.push(execution.workflowId);
      return expected.every((id) => ids.includes(id));
    },
    20_000,
    `visibility query ${query} never found ${expected.join(', ')}`,
  ).catch(() => undefined);
  return ids.sort();
}

describe("runs an operator can find and read with Temporal's tools", () => {
  let env: SapiTestEnv;
  let api: SampleApi;
  let temporalEnv: NodeJS.ProcessEnv;
  const tag = Date.now().toString(36);
  const bucketId = `in.c-ops${tag}`;
  beforeAll(async () => {
    [env, api] = await Promise.all([startSapiTestEnv('operator-view'), createSampleApi({ records: 25, pageSize: 10 })]);
    const stack = testStack();
    temporalEnv = { TEMPORAL_ADDRESS: stack.temporalAddress, TEMPORAL_NAMESPACE: stack.namespace, TEMPORAL_TASK_QUEUE: env.taskQueue };
  });
  afterAll(async () => {
    await api?.close();
    await env?.stop();
  });

  it('finds an import the CLI started by its table id, with operation, phase, rows and bytes; shows its summary, details and a summary on every activity', async () => {
    const source = join(env.dataDir, 'orders.csv');
    const csv = 'id,amount\n1,10\n2,20\n3,30\n';
    writeFileSync(source, csv);
    const workflowId = `ops-import-${tag}`;
    // a job that outlasts the short path's wait in its activity, so the workflow polls it too: held until it does
    env.emulator.faults.holdJob({ operationName: 'tableCreate', times: 1 });
    const running = cli(['import', source, '--bucket', bucketId, '--table', 'orders', '--create-bucket', '--workflow-id', workflowId, '--json'], temporalEnv);
    const workflowPolls = async () => {
      const history = await env.client.workflow
        .getHandle(workflowId)
        .fetchHistory()
        .catch(() => undefined);
      return historyShape(history?.events ?? []).activityTypes.some((type) => type === 'getJob' || type === 'awaitJob');
    };
    await eventually(workflowPolls, 120_000, 'the workflow never polled the job itself');
    env.emulator.faults.releaseJobs('tableCreate');
    const run = await running;
    expect(run).toMatchObject({ code: 0 });
    const tableId = `${bucketId}.orders`;

    // what `temporal workflow list --query 'SapiTableId="…"'` sends: the same query over the same API
    expect(await listed(env.client, `SapiTableId = "${tableId}"`, [workflowId])).toEqual([workflowId]);
    expect(await listed(env.client, `SapiTableId = "${tableId}" AND SapiOperation = "export"`, [])).toEqual([]);
    const described = await env.client.workflow.getHandle(workflowId).describe();
    expect(described.searchAttributes).toMatchObject({
      SapiOperation: ['import'],
      SapiTableId: [tableId],
      SapiBucket: [bucketId],
      SapiConnection: ['default'],
      SapiSourceKind: ['local'],
      SapiPhase: ['done'],
      SapiRows: [3],
      SapiBytes: [csv.length],
    });

    // `sapi-temporal list --table T -o json` and the text form
    const listedJson = await cli(['list', '--table', tableId, '--operation', 'import', '--status', 'completed', '-o', 'json'], temporalEnv);
    expect(listedJson.code).toBe(0);
    expect(JSON.parse(listedJson.stdout)).toEqual([
      expect.objectContaining({ workflowId, status: 'completed', operation: 'import', tableId, bucket: bucketId, phase: 'done', rows: 3, bytes: csv.length }),
    ]);
    const listedText = await cli(['list', '--table', tableId], temporalEnv);
    expect(listedText.stdout).toMatch(
      new RegExp(`^${workflowId}\\s+completed\\s+import\\s+${tableId.replace(/\./g, '\\.')}\\s+done\\s+3\\s+${csv.length}\\s`, 'm'),
    );
    expect((await cli(['list', '--table', `${tableId}-absent`], temporalEnv)).stdout).toBe('no runs found\n');

    // the UI's summary and details (static, from the start), and the current details the run left
    const handle = env.client.workflow.getHandle(workflowId);
    expect(await described.staticSummary()).toBe(`import orders.csv → ${tableId} (direct, ${csv.length} B)`);
    expect(await described.staticDetails()).toContain(`**table**: ${tableId}`);
    const details = await currentDetails(handle);
    expect(details).toContain('**phase** done');
    expect(details).toMatch(/\*\*job\*\* \d+ success/);

    // every activity call carries a summary; a poll names its number, job and the status last seen
    const { activities, markers, upserts } = await scheduledSummaries(handle);
    // a handful of upserts (start, phases, end), and no event per progress report (the upload heartbeats its bytes)
    expect(upserts).toBeGreaterThanOrEqual(3);
    expect(upserts).toBeLessThanOrEqual(10);
    const events = (await handle.fetchHistory()).events ?? [];
    expect(events.filter((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED)).toEqual([]);
    // the short path of a small import: checks, bucket and prepare, then upload + job start + first polls; then polls
    expect(activities.map(([type]) => type).slice(0, 2)).toEqual(['prepareImport', 'uploadAndStartJob']);
    for (const [type, summary] of activities) expect(summary).toMatch(new RegExp(`^${type}\\b`));
    expect(activities.filter(([type]) => type === 'getJob').map(([, s]) => s)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^getJob job \d+ (waiting|processing)$/)]),
    );
    expect(activities[0]![1]).toBe(`prepareImport ${tableId} orders.csv`);
    expect(activities[1]![1]).toBe(`uploadAndStartJob ${tableId} orders.csv`);
    expect(markers).toBeGreaterThanOrEqual(1); // the local activity that asked which attributes are registered
  });

  it('finds a paused extraction by API host and phase, with its progress in the current details, and its rows at the end', async () => {
    const config = sampleConfig(
      api,
      { method: 'response.param', responseParam: 'next_page', queryParam: 'page' },
      [{ endpoint: 'users', dataField: 'users', dataType: 'users' }],
      `ops${tag}`,
    );
    const workflowId = `ops-extract-${tag}`;
    // paused before its first batch: the pause signal arrives with the start
    const handle = await startPaused(env.client, {
      taskQueue: env.taskQueue,
      workflowId,
      input: { config, stateKey: `ops-${tag}`, options: { fetch: FAST_FETCH, polling: { initialMs: 200 } } } satisfies ExtractInput,
    });
    const host = new URL(api.url).hostname;
    expect(await listed(env.client, `SapiApiHost = "${host}" AND SapiPhase = "paused" AND SapiStateKey = "ops-${tag}"`, [workflowId])).toEqual([workflowId]);
    const listedPaused = await cli(['list', '--api-host', host, '--operation', 'extract', '--status', 'running', '-o', 'json'], temporalEnv);
    expect(JSON.parse(listedPaused.stdout)).toEqual(
      expect.arrayContaining([expect.objectContaining({ workflowId, phase: 'paused', apiHost: host, status: 'running' })]),
    );
    expect(await currentDetails(handle)).toContain('**phase** paused');

    await handle.executeUpdate('resume');
    const result = (await handle.result()) as ExtractResult;
    const rows = result.tables.reduce((sum, table) => sum + table.rows, 0);
    expect(result.records).toBe(25);
    const described = await handle.describe();
    expect(described.searchAttributes).toMatchObject({
      SapiOperation: ['extract'],
      SapiApiHost: [host],
      SapiBucket: [`in.c-ops${tag}`],
      SapiPhase: ['done'],
      SapiRows: [rows],
      SapiBytes: [result.bytes],
    });
    const details = await currentDetails(handle);
    expect(details).toContain('**phase** done');
    expect(details).toContain('**records** 25');
    const { activities } = await scheduledSummaries(handle);
    expect(activities.filter(([type]) => type === 'fetchPages').map(([, s]) => s)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^fetchPages job .* from page 1$/)]),
    );
  });

  describe('in a namespace without the search attributes registered', () => {
    // a Temporal of its own: the dev stack's registers the attributes in every namespace
    let bare: TemporalHandle;
    let connection: Connection;
    let client: Client;
    let worker: ChildProcess;
    const logs = { text: '' };
    const taskQueue = uniqueTaskQueue('bare');
    beforeAll(async () => {
      const stack = testStack();
      bare = await startTemporal({ dataDir: join(env.dataDir, 'bare-temporal'), headless: true, searchAttributes: false });
      connection = await Connection.connect({ address: bare.address });
      client = new Client({ connection, namespace: bare.namespace });
      worker = spawnTs('test/harness/worker-child.ts', [], {
        ...stack.env,
        TEMPORAL_ADDRESS: bare.address,
        TEMPORAL_TASK_QUEUE: taskQueue,
        SAPI_URL: env.emulator.url,
        SAPI_TOKEN: env.emulator.token,
        SAPI_WORK_DIR: join(env.dataDir, 'work-bare'),
        SAPI_TEST_WORKFLOW_BUNDLE: stack.workflowBundlePath,
        SAPI_LOG_LEVEL: 'WARN',
        SAPI_TEST_WORKER_IDENTITY: 'bare-namespace-worker',
      });
      worker.stdout?.on('data', (c: Buffer) => (logs.text += c.toString()));
      worker.stderr?.on('data', (c: Buffer) => (logs.text += c.toString()));
      await waitForLine(worker, /^READY$/, 60_000);
    });
    afterAll(async () => {
      worker?.kill('SIGTERM');
      await connection?.close();
      await bare?.stop();
    });

    it('completes imports without search attributes and warns once, naming the command that registers them', async () => {
      const source = join(env.dataDir, 'bare.csv');
      writeFileSync(source, 'id\n1\n2\n');
      const results = [];
      for (const table of ['first', 'second']) {
        const handle = await client.workflow.start('importTableWorkflow', {
          taskQueue,
          workflowId: `bare-${table}-${tag}`,
          args: [{ source, bucketId: `in.c-bare${tag}`, table, createBucket: true, polling: { initialMs: 200 } }],
        });
        results.push(await handle.result());
        expect((await scheduledSummaries(handle)).upserts).toBe(0);
        expect((await handle.describe()).searchAttributes).not.toHaveProperty('SapiTableId');
        expect(await currentDetails(handle)).toContain('**phase** done'); // the details do not need registration
      }
      expect(results.map((r) => (r as { importedRowsCount: number }).importedRowsCount)).toEqual([2, 2]);
      const warnings = logs.text.split('\n').filter((line) => line.includes('are not registered in namespace'));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain(registerCommand(bare.namespace));
    });
  });
});
