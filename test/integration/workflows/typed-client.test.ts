/**
 * The package's typed client helpers, against the dev server: an import and an export started with typed inputs
 * give typed results; two concurrent starts under one workflow id give one run and one Storage job (a start with
 * USE_EXISTING), the result saying which of them started it and answering the run's progress; the run carries the
 * summary a person sees in the UI; a start under the id of a completed run runs nothing again (unless `rerun`).
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { executeExport, executeImport, startExport, startImport } from '../../../src/client';
import type { TransferProgress } from '../../../src/contracts/transfer';
import { eventually } from '../../harness/processes';
import { startSapiTestEnv, type SapiTestEnv } from '../../harness/sapi-env';

describe('typed client helpers', () => {
  let env: SapiTestEnv;
  beforeAll(async () => {
    env = await startSapiTestEnv('typed-client');
  });
  afterAll(() => env?.stop());

  it('imports and exports with typed inputs and results', async () => {
    const source = join(env.dataDir, 'orders.csv');
    writeFileSync(source, 'id,name\n1,a\n2,b\n');
    const imported = await executeImport(
      env.client,
      { source, bucketId: 'in.c-typed-client', createBucket: true, table: 'orders', polling: { initialMs: 200, maxMs: 1000 } },
      { taskQueue: env.taskQueue },
    );
    expect(imported.tableId).toBe('in.c-typed-client.orders');
    expect((await env.emulator.readTable('in.c-typed-client.orders')).rows).toEqual([
      ['1', 'a'],
      ['2', 'b'],
    ]);

    const destination = join(env.dataDir, 'out.csv');
    const exported = await executeExport(
      env.client,
      { tableId: imported.tableId, destination, polling: { initialMs: 200, maxMs: 1000 } },
      { taskQueue: env.taskQueue },
    );
    const written = readFileSync(destination);
    expect(exported).toMatchObject({ path: destination, bytes: written.length, sha256: createHash('sha256').update(written).digest('hex') });
  });

  it('two concurrent starts under one workflow id give one run and one Storage job: one says it started, the other that it attached, both with the progress', async () => {
    const seenBefore = env.emulator.requests.length;
    const source = join(env.dataDir, 'again.csv');
    writeFileSync(source, 'id\n1\n');
    const input = { source, bucketId: 'in.c-typed-client', table: 'again', polling: { initialMs: 200, maxMs: 1000 } };
    const options = { taskQueue: env.taskQueue, workflowId: `typed-client-attach-${Date.now()}` };
    const [first, second] = await Promise.all([startImport(env.client, input, options), startImport(env.client, input, options)]);
    expect(second.firstExecutionRunId).toBe(first.firstExecutionRunId);
    expect([first.attached, second.attached].sort()).toEqual([false, true]);
    for (const started of [first, second])
      expect(started.progress).toMatchObject({ tableId: 'in.c-typed-client.again', phase: expect.any(String), bytes: expect.any(Number) });
    const [a, b] = await Promise.all([first.result(), second.result()]);
    expect(b).toEqual(a);
    const runs = [];
    for await (const run of env.client.workflow.list({ query: `WorkflowId = "${options.workflowId}"` })) runs.push(run.runId);
    expect(runs).toEqual([first.firstExecutionRunId]);
    const jobs = env.emulator.requests.slice(seenBefore).filter((r) => r.method === 'POST' && /\/buckets\/in\.c-typed-client\/tables-async$/.test(r.path));
    expect(jobs).toHaveLength(1);
    const described = await first.describe();
    expect(await described.staticSummary()).toMatch(/^import again\.csv → in\.c-typed-client\.again/);
  });

  it('a rerun under the id of a completed import loads nothing again and answers its result; rerun: true loads again', async () => {
    const source = join(env.dataDir, 'nightly.csv');
    writeFileSync(source, 'id,v\n1,a\n2,b\n');
    const tableId = 'in.c-typed-client.nightly';
    await executeImport(
      env.client,
      { source, bucketId: 'in.c-typed-client', createBucket: true, table: 'nightly', polling: { initialMs: 200, maxMs: 1000 } },
      { taskQueue: env.taskQueue },
    );
    const load = {
      source,
      bucketId: 'in.c-typed-client',
      table: 'nightly',
      mode: 'load' as const,
      incremental: true,
      polling: { initialMs: 200, maxMs: 1000 },
    };
    const options = { taskQueue: env.taskQueue, workflowId: `typed-client-nightly-${Date.now()}` };
    const loads = () => env.emulator.requests.filter((r) => r.method === 'POST' && r.path === `/v2/storage/tables/${tableId}/import-async`).length;
    const before = loads();

    const first = await executeImport(env.client, load, options);
    expect(first).toMatchObject({ tableId, importedRowsCount: 2 });
    const again = await startImport(env.client, load, options);
    expect({ attached: again.attached, alreadyDone: again.alreadyDone, progress: again.progress }).toEqual({
      attached: true,
      alreadyDone: true,
      progress: undefined,
    });
    expect(await again.result()).toEqual(first);
    expect(await executeImport(env.client, load, options)).toEqual(first);
    expect(loads() - before).toBe(1);
    expect((await env.emulator.readTable(tableId)).rows).toEqual([
      ['1', 'a'],
      ['2', 'b'],
      ['1', 'a'],
      ['2', 'b'],
    ]); // created once, loaded once
    const runs = async () => {
      const ids = [];
      for await (const run of env.client.workflow.list({ query: `WorkflowId = "${options.workflowId}"` })) ids.push(run.runId);
      return ids;
    };
    expect(await runs()).toEqual([again.firstExecutionRunId]);

    // a deliberate rerun: a new run under the same id, the rows loaded again
    const rerun = await startImport(env.client, load, { ...options, rerun: true });
    expect({ attached: rerun.attached, alreadyDone: rerun.alreadyDone }).toEqual({ attached: false, alreadyDone: false });
    expect(rerun.firstExecutionRunId).not.toBe(again.firstExecutionRunId);
    expect(await rerun.result()).toMatchObject({ importedRowsCount: 2 });
    expect(loads() - before).toBe(2);
    expect((await runs()).sort()).toEqual([again.firstExecutionRunId, rerun.firstExecutionRunId].sort());

    // an export under the import's id is refused, starting nothing
    await expect(startExport(env.client, { tableId, destination: join(env.dataDir, 'never.csv') }, options)).rejects.toMatchObject({
      code: 'SAPI_INVALID_INPUT',
      message: `workflow ${options.workflowId} ran (completed), but it is a importTableWorkflow, not a exportTableWorkflow: choose another workflow id`,
    });
    expect((await runs()).length).toBe(2);
  });

  it('a start under the id of a failed import runs it again without rerun', async () => {
    const options = { taskQueue: env.taskQueue, workflowId: `typed-client-failed-${Date.now()}` };
    const source = join(env.dataDir, 'after-failure.csv');
    const input = { source, bucketId: 'in.c-typed-client', createBucket: true, table: 'after_failure', polling: { initialMs: 200, maxMs: 1000 } };
    await expect(executeImport(env.client, input, options)).rejects.toThrow(); // the source does not exist yet
    writeFileSync(source, 'id\n1\n');
    const second = await startImport(env.client, input, options);
    expect({ attached: second.attached, alreadyDone: second.alreadyDone }).toEqual({ attached: false, alreadyDone: false });
    expect(await second.result()).toMatchObject({ importedRowsCount: 1 });
    expect((await env.emulator.readTable('in.c-typed-client.after_failure')).rows).toEqual([['1']]);
  });

  it('a start under the id of a running import attaches to it and answers where it is: its phase and Storage job', async () => {
    // the job runs until the second start has attached, so the run still polls when it comes
    env.emulator.faults.holdJob({ operationName: 'tableCreate', times: 1 });
    const source = join(env.dataDir, 'slow.csv');
    writeFileSync(source, 'id\n1\n2\n');
    const input = { source, bucketId: 'in.c-typed-client', table: 'slow', polling: { initialMs: 200, maxMs: 500 } };
    const options = { taskQueue: env.taskQueue, workflowId: `typed-client-running-${Date.now()}` };
    const first = await startImport(env.client, input, options);
    expect(first.attached).toBe(false);
    await eventually(async () => (await first.query<TransferProgress>('progress')).jobId !== undefined, 30_000, 'the import never started its Storage job');
    const { jobId } = await first.query<TransferProgress>('progress');
    const again = await startImport(env.client, input, options);
    expect(again.attached).toBe(true);
    expect(again.firstExecutionRunId).toBe(first.firstExecutionRunId);
    expect(again.progress).toMatchObject({ phase: 'importing', jobId, tableId: 'in.c-typed-client.slow' });
    env.emulator.faults.releaseJobs('tableCreate');
    expect(await again.result()).toMatchObject({ importedRowsCount: 2 });
    // a start without an id starts a run of its own
    const fresh = await startImport(env.client, { ...input, table: 'fresh' }, { taskQueue: env.taskQueue });
    expect({ attached: fresh.attached, alreadyDone: fresh.alreadyDone }).toEqual({ attached: false, alreadyDone: false });
    expect(fresh.progress).toBeUndefined();
    await fresh.result();
  });
});
