/**
 * The receipt step of importTableWorkflow (and of extractWorkflow's load children) on the time-skipping test server
 * with fake activities: one receipt per load that ended well, none for a failed load or when turned off, its write
 * retried by its own activity and, when it still fails, reported without failing or redoing the load.
 */
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { SapiErrorCode as ErrorCode } from '../../src/errors';
import type { ExtractInput } from '../../src/contracts/extract';
import type { ImportTableInput } from '../../src/contracts/transfer';
import { extractWorkflow, importTableWorkflow } from '../../src/workflows';
import { FakeProject, unavailable } from './harness/fake-project';
import { startTimeSkipping, withWorker } from './harness/env';
import { codeOf, settled } from './harness/outcome';
import { historyShape } from '../harness/history';

/** The message of a failed run (its workflow failure's). */
const messageOf = (err: unknown) => (err instanceof WorkflowFailedError ? String(err.cause?.message) : String(err));

const DEFAULT_TABLE = 'in.c-sapi-temporal.receipts';

let env: TestWorkflowEnvironment;
beforeEach(async () => {
  env = await startTimeSkipping();
});
afterEach(async () => {
  await env?.teardown();
});

let seq = 0;
function importRun(p: FakeProject, input: Partial<ImportTableInput>, workflowId = `import-${++seq}`) {
  return withWorker(env, p, (taskQueue) =>
    settled(
      env.client.workflow.execute(importTableWorkflow, {
        taskQueue,
        workflowId,
        args: [{ source: '/data/small.csv', bucketId: 'in.c-main', table: 't', ...input, polling: { inActivityAfterMs: -1 } }],
      }),
    ),
  );
}

const receipts = (p: FakeProject) => [...p.receipts.values()];
const calls = (p: FakeProject, name: Parameters<FakeProject['callsOf']>[0]) => p.callsOf(name).length;

describe('receipts: imports', () => {
  it('a load that ended well writes one receipt naming the run, table, rows, bytes, file, job and source; the result carries it', async () => {
    const p = new FakeProject();
    const { result } = await importRun(p, {}, 'import-receipt-1');
    expect(receipts(p)).toHaveLength(1);
    const [{ receipt, table }] = receipts(p);
    expect(table).toBe(DEFAULT_TABLE);
    expect(receipt).toMatchObject({
      workflowId: 'import-receipt-1',
      originWorkflowId: 'import-receipt-1',
      tableId: 'in.c-main.t',
      mode: 'create',
      rows: 2,
      bytes: 20,
      fileId: result!.fileId,
      jobId: result!.jobId,
      source: { kind: 'file', location: '/data/small.csv' },
    });
    expect(receipt.receiptId).toBe(`import-receipt-1/${receipt.runId}/in.c-main.t/${result!.jobId}`);
    expect(Date.parse(receipt.endedAt)).toBeGreaterThanOrEqual(Date.parse(receipt.startedAt));
    expect(result!.receipt).toEqual({ receipt, status: 'written', table: DEFAULT_TABLE });
  });

  it('an incremental load into an existing table is receipted as incremental, into the table the input names', async () => {
    const p = new FakeProject();
    p.tables.set('in.c-main.t', { rows: 5, typed: false, columns: ['id', 'name'], metadata: {} });
    const { result } = await importRun(p, { mode: 'load', incremental: true, receipts: { table: 'in.c-audit.loads' } });
    expect(receipts(p).map((r) => [r.table, r.receipt.mode, r.receipt.rows])).toEqual([['in.c-audit.loads', 'incremental', 2]]);
    expect(result!.receipt?.status).toBe('written');
  });

  it('receipts: false writes none (no call), the result still carries the receipt as off', async () => {
    const p = new FakeProject();
    const { result } = await importRun(p, { receipts: false });
    expect(calls(p, 'writeReceipt')).toBe(0);
    expect(result!.receipt).toMatchObject({ status: 'off', receipt: { tableId: 'in.c-main.t', rows: 2 } });
  });

  it('a worker whose receipts setting is off writes none unless the run names a table', async () => {
    const p = new FakeProject();
    p.receiptsTable = null;
    const off = await importRun(p, {});
    expect(off.result!.receipt?.status).toBe('off');
    const named = await importRun(p, { table: 't2', receipts: { table: 'in.c-audit.loads' } });
    expect(named.result!.receipt).toMatchObject({ status: 'written', table: 'in.c-audit.loads' });
    expect(receipts(p)).toHaveLength(1);
  });

  it('a failed load writes no receipt', async () => {
    const p = new FakeProject();
    p.nextJobFails = 'bad row 3';
    const { failure: error } = await importRun(p, {});
    expect(codeOf(error)).toBe(ErrorCode.JOB_FAILED);
    expect(calls(p, 'writeReceipt')).toBe(0);
    expect(receipts(p)).toHaveLength(0);
  });

  it('a receipt write that fails through an outage is retried by its own activity: one receipt, the load not redone', async () => {
    const p = new FakeProject();
    // the first failure is the short path's own write (inside uploadAndStartJob), the next two writeReceipt's
    p.failTimes('writeReceipt', 3, () => unavailable('writeReceipt'));
    const { result } = await importRun(p, {});
    expect(calls(p, 'writeReceipt')).toBe(3);
    expect(receipts(p)).toHaveLength(1);
    expect(result!.receipt?.status).toBe('written');
    expect(calls(p, 'uploadAndStartJob')).toBe(1);
    expect(p.tables.get('in.c-main.t')?.rows).toBe(2);
  });

  it('a receipt write that still fails is reported in the result; the run succeeds and the load is not redone', async () => {
    const p = new FakeProject();
    p.fail('writeReceipt', () => {
      throw ApplicationFailure.nonRetryable('receipts table in.c-sapi-temporal.receipts has primary key [id]', ErrorCode.INVALID_INPUT);
    });
    const { result, failure: error } = await importRun(p, {});
    expect(error).toBeUndefined();
    expect(result!.receipt).toMatchObject({ status: 'failed', error: expect.stringContaining('primary key [id]') });
    expect(result!.importedRowsCount).toBe(2);
    expect(calls(p, 'uploadAndStartJob')).toBe(1);
    expect(calls(p, 'writeReceipt')).toBe(1);
  });

  it('metadata refused after a load into an existing table: the run fails saying the rows are in, and the load has its receipt', async () => {
    const p = new FakeProject();
    p.tables.set('in.c-main.t', { rows: 0, typed: false, columns: ['id', 'name'], metadata: {} });
    p.fail('setTableMetadata', () => {
      throw ApplicationFailure.nonRetryable('metadata refused', ErrorCode.INVALID_INPUT);
    });
    const { failure: error } = await importRun(p, { mode: 'load', description: 'orders' });
    expect(error).toBeInstanceOf(WorkflowFailedError);
    expect(messageOf(error)).toContain('the rows were loaded');
    expect(receipts(p).map((r) => [r.receipt.tableId, r.receipt.mode, r.receipt.rows])).toEqual([['in.c-main.t', 'full', 2]]);
  });

  it('a typed create whose metadata is refused removes its table again and writes no receipt', async () => {
    const p = new FakeProject();
    p.fail('setTableMetadata', () => {
      throw ApplicationFailure.nonRetryable('metadata refused', ErrorCode.INVALID_INPUT);
    });
    const { failure: error } = await importRun(p, {
      typedColumns: [
        { name: 'id', definition: { type: 'INTEGER' } },
        { name: 'name', definition: { type: 'VARCHAR' } },
      ],
      description: 'x',
    });
    expect(error).toBeInstanceOf(WorkflowFailedError);
    expect(p.tables.has('in.c-main.t')).toBe(false);
    expect(calls(p, 'writeReceipt')).toBe(0);
  });

  it('an invalid receipts option is refused before anything is done', async () => {
    const p = new FakeProject();
    const { failure: error } = await importRun(p, { receipts: { table: 'receipts' } });
    expect(codeOf(error)).toBe(ErrorCode.INVALID_INPUT);
    expect(messageOf(error)).toContain('receipts.table must be a table id');
    expect(p.calls.filter((c) => c.name !== 'registeredSearchAttributes')).toHaveLength(0);
  });
});

describe("receipts: the short path writes a small load's receipt itself", () => {
  /** Runs an import and returns its result, its history's shape and the project. */
  async function shaped(p: FakeProject, input: Partial<ImportTableInput> = {}) {
    const workflowId = `import-shape-${++seq}`;
    return withWorker(env, p, async (taskQueue) => {
      const handle = await env.client.workflow.start(importTableWorkflow, {
        taskQueue,
        workflowId,
        args: [{ source: '/data/small.csv', bucketId: 'in.c-main', table: 't', ...input, polling: { inActivityAfterMs: -1 } }],
      });
      const result = await handle.result();
      return { result, workflowId, shape: historyShape((await handle.fetchHistory()).events ?? []) };
    });
  }

  it('a job that ends within uploadAndStartJob: the receipt is written there; 2 activity tasks, no timer, at most 30 events', async () => {
    const p = new FakeProject();
    const { result, workflowId, shape } = await shaped(p);
    expect(shape).toMatchObject({ activityTypes: ['prepareImport', 'uploadAndStartJob'], activityTasks: 2, timers: 0 });
    expect(shape.events).toBeLessThanOrEqual(30);
    expect(calls(p, 'writeReceipt')).toBe(0);
    const [{ receipt, table }] = receipts(p);
    expect(receipts(p)).toHaveLength(1);
    expect(table).toBe(DEFAULT_TABLE);
    expect(receipt).toMatchObject({ workflowId, tableId: 'in.c-main.t', mode: 'create', rows: 2, bytes: 20, fileId: result.fileId, jobId: result.jobId });
    expect(receipt.receiptId).toBe(`${workflowId}/${receipt.runId}/in.c-main.t/${result.jobId}`);
    expect(result.receipt).toEqual({ receipt, status: 'written', table: DEFAULT_TABLE });
  });

  it('the table the run names, and receipts: false (nothing written, no activity added)', async () => {
    const p = new FakeProject();
    const named = await shaped(p, { receipts: { table: 'in.c-audit.loads' } });
    expect(named.result.receipt).toMatchObject({ status: 'written', table: 'in.c-audit.loads' });
    expect(receipts(p).map((r) => r.table)).toEqual(['in.c-audit.loads']);
    const off = await shaped(p, { table: 't2', receipts: false });
    expect(off.result.receipt).toMatchObject({ status: 'off', receipt: { tableId: 'in.c-main.t2', rows: 2 } });
    expect(off.shape.activityTypes).toEqual(['prepareImport', 'uploadAndStartJob']);
    expect(receipts(p)).toHaveLength(1);
    expect(calls(p, 'writeReceipt')).toBe(0);
  });

  it('a job still running when uploadAndStartJob returns: polled, then the receipt written by writeReceipt, once', async () => {
    const p = new FakeProject();
    p.jobRunsMs = 10 * 60 * 1000;
    const { result, shape } = await shaped(p);
    expect(shape.activityTypes[0]).toBe('prepareImport');
    expect(shape.activityTypes[1]).toBe('uploadAndStartJob');
    expect(shape.activityTypes.slice(2, -1).every((t) => t === 'getJob')).toBe(true);
    expect(shape.activityTypes.at(-1)).toBe('writeReceipt');
    expect(shape.timers).toBeGreaterThan(0);
    expect(calls(p, 'writeReceipt')).toBe(1);
    expect(receipts(p).map((r) => [r.receipt.jobId, r.receipt.rows])).toEqual([[result.jobId, 2]]);
    // the receipt's end is the workflow's, after the job's end
    const job = [...p.jobs.values()][0]!;
    expect(Date.parse(receipts(p)[0]!.receipt.endedAt)).toBeGreaterThanOrEqual(job.createdAt + p.jobRunsMs);
    expect(result.receipt).toMatchObject({ status: 'written' });
  });

  it('a failed job within uploadAndStartJob writes no receipt there nor after', async () => {
    const p = new FakeProject();
    p.nextJobFails = 'bad row 3';
    const { failure: error } = await importRun(p, {});
    expect(codeOf(error)).toBe(ErrorCode.JOB_FAILED);
    expect(receipts(p)).toHaveLength(0);
    expect(calls(p, 'writeReceipt')).toBe(0);
  });
});

describe('receipts: extractions', () => {
  const config = {
    parameters: {
      api: { baseUrl: 'https://user:secret@api.example.com/v1?key=abc' },
      config: {
        outputBucket: 'ex',
        jobs: [
          { endpoint: 'users', dataType: 'users' },
          { endpoint: 'orders', dataType: 'orders' },
        ],
      },
    },
  };

  it('each loaded table has one receipt naming the extraction, the API and its window', async () => {
    const p = new FakeProject();
    p.api.set('users', 3);
    p.api.set('orders', 1);
    const input: ExtractInput = { config, options: { bucketId: 'in.c-ex' }, stateKey: 'crm' };
    const { result } = await withWorker(env, p, (taskQueue) =>
      settled(env.client.workflow.execute(extractWorkflow, { taskQueue, workflowId: 'extract-receipts', args: [input] })),
    );
    const byTable = Object.fromEntries(receipts(p).map((r) => [r.receipt.tableId, r.receipt]));
    expect(Object.keys(byTable).sort()).toEqual(['in.c-ex.orders', 'in.c-ex.users']);
    expect(byTable['in.c-ex.users']).toMatchObject({
      originWorkflowId: 'extract-receipts',
      originRunId: result!.runId,
      rows: 30,
      source: {
        kind: 'api',
        location: 'https://api.example.com/v1',
        range: { previousStart: 0, currentStart: result!.runTimes!.currentStart, stateKey: 'crm', pages: 4 },
      },
    });
    expect(byTable['in.c-ex.users']!.workflowId).toMatch(/^extract-receipts-load-users-/);
    expect(result!.tables.map((t) => [t.name, t.receipt?.status])).toEqual(
      expect.arrayContaining([
        ['users', 'written'],
        ['orders', 'written'],
      ]),
    );
  });

  it('options.receipts false: no receipt written, the tables still loaded', async () => {
    const p = new FakeProject();
    p.api.set('users', 1);
    const input: ExtractInput = { config, options: { bucketId: 'in.c-ex', receipts: false } };
    const { result } = await withWorker(env, p, (taskQueue) =>
      settled(env.client.workflow.execute(extractWorkflow, { taskQueue, workflowId: `extract-${++seq}`, args: [input] })),
    );
    expect(calls(p, 'writeReceipt')).toBe(0);
    expect(result!.tables.find((t) => t.name === 'users')?.receipt?.status).toBe('off');
  });
});
