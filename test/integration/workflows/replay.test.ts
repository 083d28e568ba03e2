/**
 * Every workflow's real history replays against the workflow code without non-determinism. The same histories,
 * saved under test/fixtures/histories (`SAPI_RECORD_HISTORIES=1` rewrites them), are replayed by the unit tier
 * against the code of every later change, so a change that would break running workflows fails `make test`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { startExtract, startImport } from '../../../src/client';
import { createSampleApi, type SampleApi } from '../../../src/sample-api';
import type { BackfillInput } from '../../../src/contracts/backfill';
import type { ExtractInput } from '../../../src/contracts/extract';
import type { ExportTableInput, ImportTableInput } from '../../../src/contracts/transfer';
import { eventually, runCli } from '../../harness/processes';
import { fetchHistories, RECORD_HISTORIES_ENV, replayFailures, saveHistories } from '../../harness/replay';
import { historyShape } from '../../harness/history';
import { bucketExists } from '../../harness/matrix/checks';
import { startPaused } from '../../harness/start-paused';
import { startSapiTestEnv, type SapiTestEnv } from '../../harness/sapi-env';
import { testStack } from '../../harness/stack-state';
import { FAST_FETCH, sampleConfig } from '../extract/support';

describe('workflow histories replay deterministically', () => {
  let env: SapiTestEnv;
  let api: SampleApi;
  beforeAll(async () => {
    [env, api] = await Promise.all([startSapiTestEnv('replay', { emulator: { sliceSizeBytes: 16 * 1024 } }), createSampleApi({ records: 25, pageSize: 10 })]);
  });
  afterAll(async () => {
    await api?.close();
    await env?.stop();
  });

  const polling = { initialMs: 200, maxMs: 1000 };
  const handles: Record<string, WorkflowHandle> = {};
  /** Runs a workflow to its end (failed runs are histories too), under the fixture's name as its workflow id. */
  async function started(type: string, name: string, input: object): Promise<void> {
    // the fixture's name is the workflow id: workflows derive child ids from it, so a replay must use the same one
    const handle = await env.client.workflow.start(type, { taskQueue: env.taskQueue, workflowId: name, args: [input] });
    await handle.result().catch(() => undefined);
    handles[name] = handle;
  }
  const file = (name: string, content: string) => {
    const path = join(env.dataDir, name);
    writeFileSync(path, content);
    return path;
  };

  it('replays import (direct, importer, sliced, failed, typed), export (sliced) and extract (children, page mode, page checkpoints) histories', async () => {
    const rows = Array.from({ length: 3000 }, (_, i) => `${i},name-${i},"note ${i}, quoted"`).join('\n');
    const importInput = (i: ImportTableInput) => ({ polling, ...i });
    const typedColumns = [
      { name: 'id', definition: { type: 'INTEGER', nullable: false } },
      { name: 'price', definition: { type: 'NUMBER', length: '10,2' } },
    ];
    const cursor = sampleConfig(
      api,
      { method: 'response.param', responseParam: 'meta.next_cursor', queryParam: 'cursor' },
      [{ endpoint: 'cursor/items', dataType: 'users' }],
      'replay',
    );
    // in.c-replay first: the imports below load into its tables and the extractions with outputBucket 'replay' write there
    await started(
      'importTableWorkflow',
      'import-direct-create',
      importInput({ source: file('a.csv', `id,name,note\n${rows}\n`), bucketId: 'in.c-replay', createBucket: true, table: 'items', primaryKey: ['id'] }),
    );

    // Then the independent runs side by side: each chain below runs in order what shares a table or a bucket created
    // in it, and no chain touches another's tables.
    const intoItems = async () => {
      await started(
        'importTableWorkflow',
        'import-importer-incremental',
        importInput({
          source: file('b.csv', 'id,name,note\n1,changed,x\n9001,new,y\n'),
          bucketId: 'in.c-replay',
          table: 'items',
          mode: 'load',
          incremental: true,
          via: 'importer',
        }),
      );
      const slices = [0, 1].map((p) => file(`s${p}.csv`, `${p}0001,slice-${p},z\n`));
      await started(
        'importTableWorkflow',
        'import-sliced-load',
        importInput({ source: slices[0], slices, columns: ['id', 'name', 'note'], bucketId: 'in.c-replay', table: 'items', mode: 'load', incremental: true }),
      );
      await started('exportTableWorkflow', 'export-sliced', {
        polling,
        tableId: 'in.c-replay.items',
        destination: join(env.dataDir, 'out', 'items.csv'),
      } satisfies ExportTableInput);
      // the destination checked before the export starts: refused over an existing file
      writeFileSync(join(env.dataDir, 'exists.csv'), 'keep\n');
      await started('exportTableWorkflow', 'export-destination-refused', {
        polling,
        tableId: 'in.c-replay.items',
        destination: join(env.dataDir, 'exists.csv'),
      } satisfies ExportTableInput);
    };
    const beside = async () => {
      await started(
        'importTableWorkflow',
        'import-malformed-failed',
        importInput({ source: file('bad.csv', 'id,name\n1,"open\n'), bucketId: 'in.c-replay', table: 'bad' }),
      );
      // a run rejected by the checks
      await started(
        'importTableWorkflow',
        'import-checked-missing-table',
        importInput({ source: file('c.csv', 'id\n1\n'), bucketId: 'in.c-replay', table: 'absent', mode: 'load' }),
      );
      // a typed table created from a definition, loaded and described
      await started(
        'importTableWorkflow',
        'import-typed-create-metadata',
        importInput({
          source: file('t.csv', 'id,price\n1,1.5\n2,\n'),
          bucketId: 'in.c-replay',
          table: 'typed',
          typedColumns,
          primaryKey: ['id'],
          description: 'typed',
          metadata: { owner: 'replay' },
        }),
      );
    };
    const cleanedUp = async () => {
      // a failed job whose file and bucket are removed
      await started(
        'importTableWorkflow',
        'import-failed-cleanup',
        importInput({ source: file('d.csv', 'id,name\n1\n'), bucketId: 'in.c-replay-cleanup', createBucket: true, table: 't' }),
      );
      // a typed load that fails its type check, whose empty table, file and bucket are removed
      await started(
        'importTableWorkflow',
        'import-typed-misfit-cleanup',
        importInput({ source: file('tm.csv', 'id,price\n1,abc\n'), bucketId: 'in.c-replay-typed', createBucket: true, table: 'typed', typedColumns }),
      );
    };
    // the extractions into in.c-replay (their users tables), in order
    const extractions = async () => {
      const children = sampleConfig(
        api,
        { method: 'response.param', responseParam: 'next_page', queryParam: 'page' },
        [
          {
            endpoint: 'users',
            dataField: 'users',
            dataType: 'users',
            children: [{ endpoint: 'users/{user-id}/orders', dataField: 'orders', dataType: 'orders', placeholders: { 'user-id': 'id' } }],
          },
        ],
        'replay',
      );
      await started('extractWorkflow', 'extract-children-batch', {
        config: children,
        options: { fetch: FAST_FETCH, polling, batchPages: 3 },
      } satisfies ExtractInput);
      await started('extractWorkflow', 'extract-cursor-page', { config: cursor, options: { fetch: FAST_FETCH, polling, mode: 'page' } } satisfies ExtractInput);
      // a run that reads its state from the store (none yet) and stores the next one
      await started('extractWorkflow', 'extract-run-state', {
        config: cursor,
        stateKey: 'replay-state',
        options: { fetch: FAST_FETCH, polling },
      } satisfies ExtractInput);
      // the staged pages and CSVs are removed after the load
      await started('extractWorkflow', 'extract-clean-staging', {
        config: cursor,
        options: { fetch: FAST_FETCH, polling, batchPages: 2 },
      } satisfies ExtractInput);
      // an extraction that waits paused
      const paused = await startPaused(env.client, {
        taskQueue: env.taskQueue,
        workflowId: 'extract-run-view-paused',
        input: { config: cursor, stateKey: 'replay-view', options: { fetch: FAST_FETCH, polling, batchPages: 2 } } satisfies ExtractInput,
      });
      await eventually(async () => (await paused.query<{ phase: string }>('progress')).phase === 'paused', 20_000, 'extraction never paused');
      await paused.executeUpdate('resume');
      await paused.result();
      handles['extract-run-view-paused'] = paused;
      // start-or-attach through the typed helper
      const startedExtract = await startExtract(env.client, { config: cursor, options: { fetch: FAST_FETCH, polling, batchPages: 2 } } satisfies ExtractInput, {
        taskQueue: env.taskQueue,
        workflowId: 'extract-start-or-attach',
      });
      await startedExtract.result();
      handles['extract-start-or-attach'] = startedExtract;
    };
    const pageCheckpoints = async () => {
      // page mode as long calls that checkpoint every page, children included
      const pageChildren = sampleConfig(
        api,
        { method: 'response.param', responseParam: 'next_page', queryParam: 'page' },
        [
          {
            endpoint: 'users',
            dataField: 'users',
            dataType: 'users',
            children: [{ endpoint: 'users/{user-id}/orders', dataField: 'orders', dataType: 'orders', placeholders: { 'user-id': 'id' } }],
          },
        ],
        'replay-page',
      );
      await started('extractWorkflow', 'extract-page-checkpoints', {
        config: pageChildren,
        options: { fetch: FAST_FETCH, polling, mode: 'page' },
      } satisfies ExtractInput);
    };
    const iterationRuns = async () => {
      // two iterations (one page each), a user function in userData, and an imported
      // parser structure that keeps a column
      const iterations = {
        parameters: {
          api: { baseUrl: api.url },
          config: {
            outputBucket: 'replay-iter',
            userData: { at: { function: 'date', args: ['Y', { time: 'currentStart' }] }, page: { attr: 'page' } },
            jobs: [{ endpoint: 'pages/items', dataType: 'users', dataField: 'data', params: { page: { attr: 'page' } } }],
          },
          iterations: [{ page: 1 }, { page: 2 }],
        },
      };
      const struct = {
        data: { _users: { nodeType: 'array', '[]': { nodeType: 'object', _id: { nodeType: 'scalar' }, _previous: { nodeType: 'scalar' } } } },
        parent_aliases: [],
      };
      await started('extractWorkflow', 'extract-iterations', {
        config: iterations,
        stateKey: 'replay-iter',
        importState: { time: { previousStart: 1 }, 'json_parser.struct': struct },
        options: { fetch: FAST_FETCH, polling, mode: 'page' },
      } satisfies ExtractInput);
    };
    // search attributes upserted (after a local activity found them registered), current details, a summary on every
    // activity call
    const runView = async () => {
      await started(
        'importTableWorkflow',
        'import-run-view',
        importInput({ source: file('rv.csv', 'id,name\n1,a\n2,b\n'), bucketId: 'in.c-replay-view', createBucket: true, table: 'view' }),
      );
      await started('exportTableWorkflow', 'export-run-view', {
        polling,
        tableId: 'in.c-replay-view.view',
        destination: join(env.dataDir, 'out', 'view.csv'),
      } satisfies ExportTableInput);
    };
    // `temporal workflow cancel` of an extraction stops it after the page in
    // flight, loads what it staged, and ends it cancelled
    const cancelled = async () => {
      const large = sampleConfig(
        api,
        { method: 'response.param', responseParam: 'next_page', queryParam: 'page' },
        [{ endpoint: 'large/items', dataField: 'items' }],
        'replay-cancel',
      );
      const cancelRequested = await env.client.workflow.start('extractWorkflow', {
        taskQueue: env.taskQueue,
        workflowId: 'extract-cancel-request',
        args: [{ config: large, options: { fetch: FAST_FETCH, polling, mode: 'page' } } satisfies ExtractInput],
      });
      await eventually(async () => (await cancelRequested.query<{ pages: number }>('progress')).pages >= 2, 20_000, 'the extraction fetched no pages');
      await cancelRequested.cancel();
      await cancelRequested.result().catch(() => undefined);
      handles['extract-cancel-request'] = cancelRequested;
    };
    // a small import in two activities (checks + bucket + prepare, then upload + job +
    // first polls), and one whose job fails after the run created its bucket, removed again with the file
    const shortPath = async () => {
      await started(
        'importTableWorkflow',
        'import-short-path',
        importInput({ source: file('sp.csv', 'id,name\n1,a\n2,b\n'), bucketId: 'in.c-replay-short', createBucket: true, table: 'small' }),
      );
      await started(
        'importTableWorkflow',
        'import-short-path-failed-cleanup',
        importInput({ source: file('spf.csv', 'id,name\n1\n'), bucketId: 'in.c-replay-short-cleanup', createBucket: true, table: 't' }),
      );
    };
    await Promise.all([intoItems(), beside(), cleanedUp(), extractions(), pageCheckpoints(), iterationRuns(), runView(), cancelled(), shortPath()]);

    // Last, one at a time, the runs whose tableCreate job the emulator holds (a hold takes the next job of any run).
    // Start-or-attach through the typed helpers: the `progress` update sent right after the start, and a second start
    // under the same id attaching to the running import (the update again, on a later task); its job is held until
    // the second start attached, so the run still polls when it comes (past a small import's in-activity wait)
    env.emulator.faults.holdJob({ operationName: 'tableCreate', times: 1 });
    const attachInput = importInput({ source: file('sa.csv', 'id\n1\n'), bucketId: 'in.c-replay-view', table: 'attached' });
    const startedImport = await startImport(env.client, attachInput, { taskQueue: env.taskQueue, workflowId: 'import-start-or-attach' });
    await eventually(async () => (await startedImport.query<{ jobId?: number }>('progress')).jobId !== undefined, 20_000, 'the import never started its job');
    const attachedImport = await startImport(env.client, attachInput, { taskQueue: env.taskQueue, workflowId: 'import-start-or-attach' });
    expect([startedImport.attached, attachedImport.attached]).toEqual([false, true]);
    env.emulator.faults.releaseJobs('tableCreate');
    await attachedImport.result();
    handles['import-start-or-attach'] = startedImport;

    // a long job polled in one heartbeating activity (awaitJob) once waited for longer than inActivityAfterMs (past
    // the short path's own wait for its job): held until the run waits for it in awaitJob
    env.emulator.faults.holdJob({ operationName: 'tableCreate', times: 1 });
    const awaited = await env.client.workflow.start('importTableWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: 'import-awaited-job',
      args: [
        importInput({ source: file('aw.csv', 'id\n1\n'), bucketId: 'in.c-replay-short', table: 'awaited', polling: { ...polling, inActivityAfterMs: 500 } }),
      ],
    });
    await eventually(
      async () => ((await awaited.describe()).raw.pendingActivities ?? []).some((a) => a.activityType?.name === 'awaitJob'),
      60_000,
      'the job was never awaited in awaitJob',
    );
    env.emulator.faults.releaseJobs('tableCreate');
    await awaited.result();
    handles['import-awaited-job'] = awaited;

    // a backfill: three daily windows of the sample API's dated events, two at a time after the first, each an
    // extractWorkflow child with its bounds as {"attr": "backfill.from"}
    const events = sampleConfig(
      api,
      { method: 'response.param', responseParam: 'next_page', queryParam: 'page', includeParams: true },
      [{ endpoint: 'events', dataField: 'events', params: { from: { attr: 'backfill.from' }, to: { attr: 'backfill.to' } } }],
      'replay-backfill',
    );
    await started('backfillWorkflow', 'backfill-extract-windows', {
      kind: 'extract',
      extract: { config: events, options: { fetch: FAST_FETCH, polling, incremental: true } },
      from: '2025-01-01',
      to: '2025-01-04',
      window: 'P1D',
      parallel: 2,
    } satisfies BackfillInput);

    // the runs did what their names say (a replay of the wrong history would prove little)
    const statuses = Object.fromEntries(await Promise.all(Object.entries(handles).map(async ([k, h]) => [k, (await h.describe()).status.name])));
    expect(statuses).toEqual({
      'import-direct-create': 'COMPLETED',
      'import-importer-incremental': 'COMPLETED',
      'import-sliced-load': 'COMPLETED',
      'import-malformed-failed': 'FAILED',
      'import-checked-missing-table': 'FAILED',
      'import-failed-cleanup': 'FAILED',
      'import-typed-create-metadata': 'COMPLETED',
      'import-typed-misfit-cleanup': 'FAILED',
      'export-sliced': 'COMPLETED',
      'export-destination-refused': 'FAILED',
      'extract-children-batch': 'COMPLETED',
      'extract-cursor-page': 'COMPLETED',
      'extract-page-checkpoints': 'COMPLETED',
      'extract-run-state': 'COMPLETED',
      'extract-iterations': 'COMPLETED',
      'extract-clean-staging': 'COMPLETED',
      'import-run-view': 'COMPLETED',
      'export-run-view': 'COMPLETED',
      'extract-run-view-paused': 'COMPLETED',
      'import-start-or-attach': 'COMPLETED',
      'extract-start-or-attach': 'COMPLETED',
      'extract-cancel-request': 'CANCELLED',
      'import-short-path': 'COMPLETED',
      'import-short-path-failed-cleanup': 'FAILED',
      'import-awaited-job': 'COMPLETED',
      'backfill-extract-windows': 'COMPLETED',
    });
    expect((await env.emulator.readTable('in.c-replay-backfill.events')).rows).toHaveLength(15);
    expect((await env.emulator.readTable('in.c-replay-cancel.large_items')).rows.length).toBeGreaterThan(0);
    const iterated = await env.emulator.readTable('in.c-replay-iter.users');
    expect(iterated.columns.slice(0, 2)).toEqual(['id', 'previous']);
    expect(iterated.rows).toHaveLength(20);
    expect((await env.emulator.readTable('in.c-replay.items')).rows).toHaveLength(3003);
    // the short path's histories show what they are named for: two activities and the load's receipt; the clean-up after the failed job
    const types = async (name: string) => historyShape((await handles[name]!.fetchHistory()).events ?? []).activityTypes;
    expect(await types('import-short-path')).toEqual(['prepareImport', 'uploadAndStartJob']);
    expect(await types('import-short-path-failed-cleanup')).toEqual(['prepareImport', 'uploadAndStartJob', 'cleanUpImport']);
    expect(await types('import-awaited-job')).toContain('awaitJob');
    expect(await bucketExists(env.emulator, 'in.c-replay-short-cleanup')).toBe(false);

    const histories = await fetchHistories(handles);
    const bundle = { code: readFileSync(testStack().workflowBundlePath, 'utf8') };
    expect(await replayFailures({ workflowBundle: bundle }, histories)).toEqual([]);
    const record = process.env[RECORD_HISTORIES_ENV];
    if (record === '1' || record === 'all') saveHistories(histories, undefined, record === 'all');
    // some twenty runs, most side by side: more than the tier's default timeout on a loaded machine
  }, 300_000);

  // the check before a deploy, from the server's histories: the runs above (and their child imports), then (default
  // query) the plugin's runs still running on a queue, here one no worker polls
  it('sapi-temporal replay-check replays the runs a query finds, and by default the running ones of the task queue', async () => {
    expect(Object.keys(handles).length).toBeGreaterThan(10);
    const temporal = { TEMPORAL_ADDRESS: testStack().temporalAddress, TEMPORAL_NAMESPACE: testStack().namespace };
    const recent = await runCli(['replay-check', '--query', `TaskQueue="${env.taskQueue}"`], temporal);
    expect({ code: recent.code, stderr: recent.stderr }).toEqual({ code: 0, stderr: '' });
    for (const name of Object.keys(handles)) expect(recent.stdout).toMatch(new RegExp(`^ok +${name} `, 'm'));
    // the extractions' child imports too
    expect(recent.stdout).toMatch(/^ok +extract-children-batch-load-orders-\w+ +importTableWorkflow /m);
    const [, replayed, of] = recent.stdout.match(/^(\d+) of (\d+) replayed/m) ?? [];
    expect(Number(replayed)).toBe(Number(of));
    expect(Number(of)).toBeGreaterThan(Object.keys(handles).length);

    const idleQueue = `${env.taskQueue}-idle`;
    const waiting = await env.client.workflow.start('importTableWorkflow', {
      taskQueue: idleQueue,
      workflowId: 'replay-check-running',
      args: [{ source: 'x.csv', bucketId: 'in.c-x', table: 't' }],
    });
    try {
      await eventually(async () => (await env.client.workflow.count(`TaskQueue="${idleQueue}"`)).count === 1, 30_000, 'the waiting run is visible');
      const running = await runCli(['replay-check', '--task-queue', idleQueue], temporal);
      expect(running.code).toBe(0);
      expect(running.stdout).toMatch(/^ok +replay-check-running +importTableWorkflow +\d+ events$/m);
      expect(running.stdout).toContain(`1 of 1 replayed (namespace ${testStack().namespace}, query TaskQueue="${idleQueue}" AND ExecutionStatus="Running"`);
    } finally {
      await waiting.terminate('replay-check test done');
    }
  });
});
