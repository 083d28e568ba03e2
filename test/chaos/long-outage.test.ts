/**
 * A Storage API maintenance window longer than any count of retries: every request answers 503 without `Retry-After`
 * (or the connection is reset) for `SAPI_LONG_OUTAGE_MINUTES` minutes (`make test-outages`: 6, longer than the
 * whole retry budget of attempts the activities had before; 30–60 for the real thing). Four runs meet it side by
 * side, each in another phase: an import whose job is polled, an export whose job is polled, an import started during
 * it (its checks) and an extraction that loads during it; a fifth, an extraction, meets its own API down as long while
 * it fetches. Each waits the outage out by time (the run's outage budget,
 * 1 hour by default) and ends COMPLETED with exact rows, one Storage job per operation, nothing left behind. Outside
 * `make test-outages` the suite is skipped (it takes the outage's length).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import type { ExportTableResult, ImportTableResult, TransferProgress } from '../../src/contracts/transfer';
import type { ExtractInput, ExtractProgress, ExtractResult } from '../../src/contracts/extract';
import { createSampleApi, type SampleApi } from '../../src/sample-api';
import { startSapiTestEnv, type SapiTestEnv } from '../harness/sapi-env';
import { eventually, runCli } from '../harness/processes';
import { testStack } from '../harness/stack-state';
import { creatingRequests, listJobs } from '../harness/matrix/checks';
import { FAST_FETCH, sampleConfig } from '../integration/extract/support';

const minutes = Number(process.env.SAPI_LONG_OUTAGE_MINUTES ?? 0);
const suite = minutes > 0 ? describe : describe.skip;
const outageMs = minutes * 60_000;
const rowsCsv = (n: number, from = 0) => `id,v\n${Array.from({ length: n }, (_, i) => `${from + i},v${from + i}`).join('\n')}\n`;

suite(`a ${minutes}-minute Storage API outage`, () => {
  let env: SapiTestEnv;
  let api: SampleApi;
  /** The extracted API of the fifth run: down (503, no Retry-After) for the outage's length while it is fetched. */
  let downApi: SampleApi;
  beforeAll(async () => {
    [env, api, downApi] = await Promise.all([
      startSapiTestEnv('long-outage'),
      createSampleApi({ records: 120, pageSize: 10 }),
      createSampleApi({ records: 60, pageSize: 10 }),
    ]);
    // the export's table, loaded before the outage
    const source = join(env.dataDir, 'base.csv');
    writeFileSync(source, rowsCsv(300));
    await env.client.workflow.execute('importTableWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: `outage-base-${Date.now()}`,
      args: [{ source, bucketId: 'in.c-outage', createBucket: true, table: 'base' }],
    });
  });
  afterAll(async () => {
    await api?.close();
    await downApi?.close();
    await env?.stop();
  });

  it(
    'is waited out by an import and an export polling their jobs, an import started during it and an extraction loading during it',
    async () => {
      const start = (type: string, name: string, input: object): Promise<WorkflowHandle> =>
        env.client.workflow.start(type, { taskQueue: env.taskQueue, workflowId: `outage-${name}-${Date.now()}`, args: [input] });
      const polling = { initialMs: 1000, maxMs: 5000 };
      // jobs held until the outage has begun: they end on the service while every answer is 503
      env.emulator.faults.holdJob({ operationName: 'tableCreate', times: 1 });
      env.emulator.faults.holdJob({ operationName: 'tableExport', times: 1 });
      const polled = join(env.dataDir, 'polled.csv');
      writeFileSync(polled, rowsCsv(200));
      const importing = await start('importTableWorkflow', 'polled', { source: polled, bucketId: 'in.c-outage', table: 'polled', polling });
      const exporting = await start('exportTableWorkflow', 'export', {
        tableId: 'in.c-outage.base',
        destination: join(env.dataDir, 'out', 'base.csv'),
        polling,
      });
      await eventually(async () => (await importing.query<TransferProgress>('progress')).jobId !== undefined, 60_000, 'the import never started its job');
      await eventually(async () => (await exporting.query<TransferProgress>('progress')).jobId !== undefined, 60_000, 'the export never started its job');

      // the outage: every Storage request 503 without Retry-After (its resets are the chaos matrix's)
      const began = Date.now();
      env.emulator.faults.add({ path: '.*', untilMs: outageMs, action: { type: 'status', status: 503 } });
      await Promise.all([env.emulator.faults.jobHeld('tableCreate'), env.emulator.faults.jobHeld('tableExport')]);
      env.emulator.faults.releaseJobs('tableCreate');
      env.emulator.faults.releaseJobs('tableExport');
      const during = join(env.dataDir, 'during.csv');
      writeFileSync(during, rowsCsv(150, 1000));
      const startedDuring = await start('importTableWorkflow', 'during', { source: during, bucketId: 'in.c-outage', table: 'during', polling });
      const config = sampleConfig(
        api,
        { method: 'response.param', responseParam: 'meta.next_cursor', queryParam: 'cursor' },
        [{ endpoint: 'cursor/items', dataType: 'users' }],
        'outage',
      );
      const extracting = await start('extractWorkflow', 'extract', { config, options: { fetch: FAST_FETCH, polling } } satisfies ExtractInput);
      // and an extraction whose own API goes down after its second page, for as long
      downApi.misbehave({ kind: 'server-error', status: 503, path: '/cursor', after: 2, times: Infinity, untilMs: outageMs });
      const downConfig = sampleConfig(
        downApi,
        { method: 'response.param', responseParam: 'meta.next_cursor', queryParam: 'cursor' },
        [{ endpoint: 'cursor/items', dataType: 'people' }],
        'outage',
      );
      const fetching = await start('extractWorkflow', 'fetching', { config: downConfig, options: { fetch: FAST_FETCH, polling } } satisfies ExtractInput);

      // while it lasts, the run says where it waits: `status` lists the call being retried, its attempt and the 503
      const stack = testStack();
      const cliEnv = { TEMPORAL_ADDRESS: stack.temporalAddress, TEMPORAL_NAMESPACE: stack.namespace, TEMPORAL_TASK_QUEUE: env.taskQueue };
      let waiting: { retrying?: Array<{ activity: string; attempt: number; lastFailure?: string }> } = {};
      await eventually(
        async () => {
          waiting = JSON.parse((await runCli(['status', startedDuring.workflowId, '--json'], cliEnv)).stdout);
          return (waiting.retrying ?? []).some((r) => r.attempt >= 3);
        },
        outageMs,
        'status never showed the call being retried',
      );
      expect(waiting.retrying?.[0]?.lastFailure).toMatch(/503/);
      // and the runs' own progress says it: the call waiting, its last failure and since when
      for (const handle of [importing, exporting, startedDuring]) {
        let progress: TransferProgress | undefined;
        await eventually(
          async () => (progress = await handle.query<TransferProgress>('progress')).waitingFor !== undefined,
          outageMs,
          `${handle.workflowId} never said what it waits for`,
        );
        expect(progress!.waitingFor!.lastFailure).toMatch(/503/);
      }
      let extractProgress: ExtractProgress | undefined;
      await eventually(
        async () => (extractProgress = await fetching.query<ExtractProgress>('progress')).waitingFor !== undefined,
        outageMs,
        'the extraction never said what it waits for',
      );
      expect(extractProgress!.waitingFor).toMatchObject({ call: 'fetchPages', lastFailure: expect.stringMatching(/503/) as unknown });

      const [imported, exported, importedDuring, extracted, fetched] = await Promise.all([
        importing.result(),
        exporting.result(),
        startedDuring.result(),
        extracting.result(),
        fetching.result(),
      ]);
      // every run ended after the outage did (their histories' close times), none failed
      const closed = await Promise.all(
        [importing, exporting, startedDuring, extracting, fetching].map(async (run) => (await run.describe()).closeTime!.getTime()),
      );
      for (const closeTime of closed) expect(closeTime).toBeGreaterThanOrEqual(began + outageMs);
      expect((imported as ImportTableResult).importedRowsCount).toBe(200);
      expect((exported as ExportTableResult).bytes).toBeGreaterThan(0);
      expect((importedDuring as ImportTableResult).importedRowsCount).toBe(150);
      expect((extracted as ExtractResult).records).toBe(120);
      expect((fetched as ExtractResult).records).toBe(60);
      expect(downApi.requests.filter((r) => r.misbehaved).length).toBeGreaterThan(10);
      // rows exact, one job per operation
      expect((await env.emulator.readTable('in.c-outage.polled')).rows).toHaveLength(200);
      expect((await env.emulator.readTable('in.c-outage.during')).rows).toHaveLength(150);
      expect((await env.emulator.readTable('in.c-outage.users')).rows).toHaveLength(120);
      expect((await env.emulator.readTable('in.c-outage.people')).rows).toHaveLength(60);
      // the requests that created something (a refused one, 503 by the outage, created nothing), and the jobs
      const jobs = await listJobs(env.emulator);
      const created = (path: RegExp) => creatingRequests(env.emulator.requests, 0, 'POST', path);
      // base, polled, during, and the extraction's three tables (users and its nested arrays)
      const tables = [
        'in.c-outage.base',
        'in.c-outage.during',
        'in.c-outage.people',
        'in.c-outage.people_contacts',
        'in.c-outage.people_tags',
        'in.c-outage.polled',
        'in.c-outage.users',
        'in.c-outage.users_contacts',
        'in.c-outage.users_tags',
      ];
      expect(created(/\/buckets\/in\.c-outage\/tables-async$/)).toHaveLength(tables.length);
      expect(created(/\/tables\/in\.c-outage\.base\/export-async$/)).toHaveLength(1);
      // (the runs' load receipts went to the receipts table: a job of its own, not counted here)
      expect(
        jobs
          .filter((j) => j.operationName === 'tableCreate' && j.tableId?.startsWith('in.c-outage.'))
          .map((j) => j.tableId)
          .sort(),
      ).toEqual(tables);
      expect(jobs.filter((j) => j.operationName === 'tableExport')).toHaveLength(1);
    },
    outageMs + 15 * 60_000,
  );
});
