/**
 * Load receipts (issue 42) end to end: the real Temporal dev server, the emulator, the sample API. One receipt row
 * per load that ended well in the receipts table (and in the run's result), none for a failed load; the
 * `receipts` and `verify` commands read them back.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ExtractInput, ExtractResult } from '../../../src/contracts/extract';
import type { ImportTableInput, ImportTableResult } from '../../../src/contracts/transfer';
import { DEFAULT_RECEIPTS_TABLE, RECEIPT_COLUMNS, type LoadReceipt } from '../../../src/contracts/receipts';
import { run as runCli } from '../../../src/cli';
import { createSampleApi, makeUsers, type SampleApi } from '../../../src/sample-api';
import { startSapiTestEnv, type SapiTestEnv } from '../../harness/sapi-env';
import { failureOf } from '../../harness/workflow-failure';
import { receiptsWhere } from '../../harness/matrix/checks';
import { FAST_FETCH, sampleConfig } from '../extract/support';

const POLLING = { initialMs: 200, maxMs: 1000 };

describe('load receipts against the emulator', () => {
  let env: SapiTestEnv;
  let api: SampleApi;
  let n = 0;
  beforeAll(async () => {
    [env, api] = await Promise.all([startSapiTestEnv('receipts'), createSampleApi({ records: 25, pageSize: 10 })]);
    api.setDataset(makeUsers(25) as unknown as Array<Record<string, unknown>>);
  });
  afterAll(async () => {
    await api?.close();
    await env?.stop();
  });

  const id = (name: string) => `receipts-${name}-${Date.now()}-${++n}`;

  function csvFile(name: string, content: string): string {
    const path = join(env.dataDir, name);
    writeFileSync(path, content);
    return path;
  }

  function importRun(input: Partial<ImportTableInput> & Pick<ImportTableInput, 'source' | 'table'>, workflowId = id('import')) {
    return {
      workflowId,
      result: env.client.workflow.execute('importTableWorkflow', {
        taskQueue: env.taskQueue,
        workflowId,
        args: [{ bucketId: 'in.c-rc', createBucket: true, polling: POLLING, ...input }],
      }) as Promise<ImportTableResult>,
    };
  }

  /** Runs the CLI in this process with the test's Storage connection; its exit code and what it printed on stdout. */
  async function cli(...args: string[]): Promise<{ code: number; stdout: string }> {
    let stdout = '';
    const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => ((stdout += String(chunk)), true));
    const stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const code = await runCli(['node', 'sapi-temporal', ...args], { env: { SAPI_URL: env.emulator.url, SAPI_TOKEN: env.emulator.token } });
      return { code, stdout };
    } finally {
      write.mockRestore();
      stderr.mockRestore();
    }
  }

  it('an import writes one receipt row naming its run, table, rows, bytes, file, job and source; the result carries it', async () => {
    const content = 'id,name\n1,alpha\n2,beta\n3,gamma\n';
    const run = importRun({ source: csvFile('first.csv', content), table: 'first' });
    const result = await run.result;
    const rows = await receiptsWhere(env.emulator, 'workflow_id', run.workflowId);
    expect(rows).toHaveLength(1);
    const receipt = rows[0]!;
    expect(receipt).toMatchObject({
      workflowId: run.workflowId,
      originWorkflowId: run.workflowId,
      tableId: 'in.c-rc.first',
      mode: 'create',
      rows: 3,
      bytes: Buffer.byteLength(content),
      fileId: result.fileId,
      jobId: result.jobId,
      source: { kind: 'file', location: join(env.dataDir, 'first.csv') },
    });
    expect(result.receipt).toEqual({ receipt, status: 'written', table: DEFAULT_RECEIPTS_TABLE });
    // the receipts table: every column, keyed by receipt_id (a repeated write is an upsert)
    const table = await env.emulator.readTable(DEFAULT_RECEIPTS_TABLE);
    expect(table.columns).toEqual([...RECEIPT_COLUMNS]);
    const described = await (
      await fetch(`${env.emulator.url}/v2/storage/tables/${DEFAULT_RECEIPTS_TABLE}`, { headers: { 'X-StorageApi-Token': env.emulator.token } })
    ).json();
    expect((described as { primaryKey: string[] }).primaryKey).toEqual(['receipt_id']);
  });

  it('a failed load writes no receipt', async () => {
    env.emulator.faults.failJob({ operationName: 'tableCreate', message: 'refused by the test', times: 1 });
    const run = importRun({ source: csvFile('failing.csv', 'id\n1\n'), table: 'failing' });
    const failure = await failureOf(run.result);
    expect(failure.type).toBe('SAPI_JOB_FAILED');
    expect(await receiptsWhere(env.emulator, 'workflow_id', run.workflowId)).toEqual([]);
    expect(await receiptsWhere(env.emulator, 'table_id', 'in.c-rc.failing')).toEqual([]);
  });

  it('receipts go to the table the input names; receipts: false writes none', async () => {
    const named = importRun({ source: csvFile('named.csv', 'id\n1\n2\n'), table: 'named', receipts: { table: 'in.c-audit.loads' } });
    expect((await named.result).receipt).toMatchObject({ status: 'written', table: 'in.c-audit.loads' });
    expect((await receiptsWhere(env.emulator, 'workflow_id', named.workflowId, 'in.c-audit.loads')).map((r) => r.rows)).toEqual([2]);
    expect(await receiptsWhere(env.emulator, 'workflow_id', named.workflowId)).toEqual([]);
    const off = importRun({ source: csvFile('off.csv', 'id\n1\n'), table: 'off', receipts: false });
    expect((await off.result).receipt?.status).toBe('off');
    expect(await receiptsWhere(env.emulator, 'table_id', 'in.c-rc.off')).toEqual([]);
  });

  it('an extraction writes one receipt per loaded table, naming the extraction, the API and its window', async () => {
    const workflowId = id('extract');
    const config = sampleConfig(
      api,
      { method: 'response.param', responseParam: 'meta.next_cursor', queryParam: 'cursor' },
      [{ endpoint: 'cursor/items', dataType: 'users' }],
      'rcx',
    );
    const input: ExtractInput = { config, options: { fetch: FAST_FETCH, polling: POLLING } };
    const result = (await env.client.workflow.execute('extractWorkflow', { taskQueue: env.taskQueue, workflowId, args: [input] })) as ExtractResult;
    const receipts = await receiptsWhere(env.emulator, 'origin_workflow_id', workflowId);
    const loaded = result.tables.filter((t) => t.tableId !== null);
    expect(receipts.map((r) => r.tableId).sort()).toEqual(loaded.map((t) => t.tableId).sort());
    const users = receipts.find((r) => r.tableId === 'in.c-rcx.users')!;
    expect(users).toMatchObject({
      originRunId: result.runId,
      rows: 25,
      mode: 'create',
      source: { kind: 'api', location: api.url, range: { pages: result.pages } },
    });
    expect(users.source.range).toMatchObject({ previousStart: 0, currentStart: result.runTimes!.currentStart });
    expect(users.workflowId).toMatch(new RegExp(`^${workflowId}-load-users-`));
    for (const table of loaded) expect(table.receipt).toMatchObject({ status: 'written', receipt: { tableId: table.tableId } });

    const verified = await cli('verify', '--run', workflowId, '--json');
    expect(verified.code).toBe(0);
    const report = JSON.parse(verified.stdout) as { ok: boolean; checks: Array<{ tableId: string; status: string; tableRows: number; receiptRows: number }> };
    expect(report.ok).toBe(true);
    expect(report.checks.find((c) => c.tableId === 'in.c-rcx.users')).toMatchObject({ status: 'ok', tableRows: 25, receiptRows: 25 });
  });

  it('receipts --table lists the loads into a table newest first; verify recounts a full load, a superseded one, and finds rows loaded without a receipt', async () => {
    const first = importRun({ source: csvFile('v1.csv', 'id,v\n1,a\n2,b\n'), table: 'ledger', primaryKey: ['id'] });
    await first.result;
    const second = importRun({ source: csvFile('v2.csv', 'id,v\n1,a\n2,b\n3,c\n'), table: 'ledger', mode: 'load', createBucket: false });
    await second.result;

    const listed = await cli('receipts', '--table', 'in.c-rc.ledger', '--json');
    expect(listed.code).toBe(0);
    const { receipts } = JSON.parse(listed.stdout) as { receipts: LoadReceipt[] };
    expect(receipts.map((r) => [r.workflowId, r.mode, r.rows])).toEqual([
      [second.workflowId, 'full', 3],
      [first.workflowId, 'create', 2],
    ]);
    const text = await cli('receipts', '--table', 'in.c-rc.ledger');
    expect(text.stdout.trim().split('\n')).toEqual([expect.stringContaining(`run ${second.workflowId}`), expect.stringContaining(`run ${first.workflowId}`)]);
    expect(text.stdout).toContain(`file ${join(env.dataDir, 'v2.csv')}`);

    expect(await cli('verify', '--run', second.workflowId)).toEqual({
      code: 0,
      stdout: expect.stringMatching(/^verify .*: 1 load checked, none failed\nok +in\.c-rc\.ledger has 3 rows, the full load \(job \d+\) loaded 3\n$/),
    });
    const superseded = JSON.parse((await cli('verify', '--run', first.workflowId, '--json')).stdout) as { checks: Array<{ status: string }> };
    expect(superseded.checks.map((c) => c.status)).toEqual(['superseded']);

    // rows that came without a receipt: verify fails, naming the table and the counts
    await importRun({ source: csvFile('v3.csv', 'id,v\n9,z\n'), table: 'ledger', mode: 'load', incremental: true, createBucket: false, receipts: false })
      .result;
    const failed = await cli('verify', '--run', second.workflowId, '--json');
    expect(failed.code).toBe(1);
    const error = JSON.parse(failed.stdout) as {
      error: { code: string; message: string; checks: Array<{ status: string; tableRows: number; receiptRows: number }> };
    };
    expect(error.error).toMatchObject({ code: 'SAPI_CLI_VERIFY_FAILED', checks: [{ status: 'mismatch', tableRows: 4, receiptRows: 3 }] });
    expect(error.error.message).toContain('in.c-rc.ledger has 4 rows');
  });
});
