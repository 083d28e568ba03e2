import { resolve } from 'node:path';
import { run } from '../../../src/cli';
import { buildProgram } from '../../../src/cli/program';
import { cliSettings, parseCsvCharacter, parseList, workerLocation } from '../../../src/cli/common';
import { parseWhere } from '../../../src/cli/export';
import type { TransferRun, TransferRunner } from '../../../src/cli/context';

/** Parses a command line with a recorder in place of the workflow runner; nothing connects anywhere. */
async function parse(args: string[], env: NodeJS.ProcessEnv = {}): Promise<TransferRun> {
  const runs: TransferRun[] = [];
  const record: TransferRunner = async (transfer) => void runs.push(transfer as unknown as TransferRun);
  await buildProgram({ env, runTransfer: record }).parseAsync(args, { from: 'user' });
  expect(runs).toHaveLength(1);
  return runs[0]!;
}

describe('CLI command lines', () => {
  let stderr: jest.SpyInstance;
  beforeEach(() => (stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true)));
  afterEach(() => stderr.mockRestore());

  it('turns an import command line into the workflow input, with the local source made absolute', async () => {
    const transfer = await parse([
      'import',
      'data/orders.csv',
      '--bucket',
      'in.c-main',
      '--table',
      'orders',
      '--create-bucket',
      '--primary-key',
      'a, b',
      '--via',
      'importer',
      '--delimiter',
      '\\t',
      '--enclosure',
      "'",
      '--gzip',
      '--connection',
      'eu',
      '--transfer-task-queue',
      'host-q',
      '--workflow-id',
      'my-import',
      '--json',
    ]);
    expect(transfer).toMatchObject({ verb: 'import', workflowType: 'importTableWorkflow', workflowId: 'my-import', json: true });
    expect(transfer.input).toEqual({
      connection: 'eu',
      source: resolve('data/orders.csv'),
      bucketId: 'in.c-main',
      createBucket: true,
      table: 'orders',
      mode: 'create',
      primaryKey: ['a', 'b'],
      csv: { delimiter: '\t', enclosure: "'" },
      via: 'importer',
      gzip: true,
      transferTaskQueue: 'host-q',
    });
  });

  it('defaults an import to create mode, no dialect, a generated workflow id and the Temporal settings from env', async () => {
    const transfer = await parse(['import', 's3://landing/x.csv', '--bucket', 'in.c-a', '--table', 't'], {
      TEMPORAL_ADDRESS: 'temporal:7233',
      TEMPORAL_TASK_QUEUE: 'q-env',
    });
    expect(transfer.input).toEqual({ source: 's3://landing/x.csv', bucketId: 'in.c-a', table: 't', mode: 'create' });
    expect(transfer.workflowId).toMatch(/^import-in\.c-a\.t-[a-z0-9]+$/);
    expect(transfer.settings).toEqual({ address: 'temporal:7233', namespace: 'default', taskQueue: 'q-env' });
    expect(transfer.json).toBe(false);
  });

  it('lets --address, --namespace and --task-queue override the environment', async () => {
    const transfer = await parse(
      [
        'import',
        'x.csv',
        '--bucket',
        'in.c-a',
        '--table',
        't',
        '--mode',
        'load',
        '--incremental',
        '--address',
        'other:1',
        '--namespace',
        'ns',
        '--task-queue',
        'q-flag',
      ],
      { TEMPORAL_ADDRESS: 'temporal:7233', TEMPORAL_NAMESPACE: 'env-ns', TEMPORAL_TASK_QUEUE: 'q-env' },
    );
    expect(transfer.settings).toEqual({ address: 'other:1', namespace: 'ns', taskQueue: 'q-flag' });
    expect(transfer.input).toMatchObject({ mode: 'load', incremental: true });
  });

  it('turns an export command line into the workflow input, --keep-gzip implying --gzip and --where repeatable', async () => {
    const transfer = await parse([
      'export',
      'in.c-main.orders',
      'out/orders.csv',
      '--columns',
      'id,status',
      '--limit',
      '100',
      '--keep-gzip',
      '--no-header',
      '--where',
      'status=active|pending',
      '--where',
      'amount=gt:10',
      '--json',
    ]);
    expect(transfer).toMatchObject({ verb: 'export', workflowType: 'exportTableWorkflow', json: true });
    expect(transfer.workflowId).toMatch(/^export-in\.c-main\.orders-/);
    expect(transfer.input).toEqual({
      tableId: 'in.c-main.orders',
      destination: resolve('out/orders.csv'),
      columns: ['id', 'status'],
      limit: 100,
      whereFilters: [
        { column: 'status', values: ['active', 'pending'] },
        { column: 'amount', operator: 'gt', values: ['10'] },
      ],
      gzip: true,
      keepGzip: true,
      header: false,
    });
  });

  it('leaves the header and compression to the workflow defaults when not asked', async () => {
    const transfer = await parse(['export', 'in.c-main.orders', 's3://bucket/orders.csv']);
    expect(transfer.input).toEqual({ tableId: 'in.c-main.orders', destination: 's3://bucket/orders.csv' });
  });

  it.each([
    [['import', 'x.csv', '--table', 't'], /required option '--bucket/],
    [['import', '--bucket', 'in.c-a', '--table', 't'], /missing required argument 'source'/],
    [['import', 'x.csv', '--bucket', 'in.c-a', '--table', 't', '--bogus'], /unknown option '--bogus'/],
    [['import', 'x.csv', '--bucket', 'in.c-a', '--table', 't', '--mode', 'append'], /--mode.*create, load/],
    [['import', 'x.csv', '--bucket', 'in.c-a', '--table', 't', '--incremental'], /--incremental needs --mode load/],
    [['import', 'x.csv', '--bucket', 'in.c-a', '--table', 't', '--delimiter', ';;'], /one character/],
    [['export', 'in.c-a.t', 'out.csv', '--limit', '0'], /whole number ≥ 1/],
    [['export', 'in.c-a.t', 'out.csv', '--where', 'noequals'], /column=value/],
    [['export', 'in.c-a.t'], /missing required argument 'destination'/],
    [['nonsense'], /unknown command 'nonsense'/],
  ])("exits 2 with commander's message for the usage error in %j", async (args, message) => {
    const runTransfer = jest.fn();
    expect(await run(['node', 'sapi-temporal', ...args], { env: {}, runTransfer })).toBe(2);
    expect(runTransfer).not.toHaveBeenCalled();
    expect(stderr.mock.calls.map(([chunk]) => String(chunk)).join('')).toMatch(message);
  });

  it('exits 1 with one sapi-temporal: line when the command fails', async () => {
    const runTransfer = jest.fn().mockRejectedValue(new Error('import failed [SAPI_JOB_FAILED] Storage job 3 failed:\nbad CSV (workflow w)'));
    expect(await run(['node', 'sapi-temporal', 'import', 'x.csv', '--bucket', 'in.c-a', '--table', 't'], { env: {}, runTransfer })).toBe(1);
    expect(stderr.mock.calls.map(([chunk]) => String(chunk))).toEqual([
      'sapi-temporal: import failed [SAPI_JOB_FAILED] Storage job 3 failed: | bad CSV (workflow w)\n',
    ]);
  });
});

describe('CLI option values', () => {
  it('splits comma-separated lists and rejects empty ones', () => {
    expect(parseList('a,b')).toEqual(['a', 'b']);
    expect(parseList(' a , ,b ')).toEqual(['a', 'b']);
    expect(() => parseList(' , ')).toThrow(/comma-separated/);
  });

  it('parses --where as column=value, column=v1|v2 and column=op:v1|v2', () => {
    expect(parseWhere('status=active')).toEqual([{ column: 'status', values: ['active'] }]);
    expect(parseWhere('status=ne:a|b', [{ column: 'x', values: ['1'] }])).toEqual([
      { column: 'x', values: ['1'] },
      { column: 'status', operator: 'ne', values: ['a', 'b'] },
    ]);
    expect(parseWhere('note=time:12:00')).toEqual([{ column: 'note', values: ['time:12:00'] }]);
    expect(parseWhere('empty=')).toEqual([{ column: 'empty', values: [''] }]);
    expect(() => parseWhere('=x')).toThrow(/column=value/);
  });

  it('reads a tab delimiter as \\t or tab', () => {
    expect(parseCsvCharacter('\\t')).toBe('\t');
    expect(parseCsvCharacter('tab')).toBe('\t');
    expect(parseCsvCharacter(';')).toBe(';');
  });

  it('makes local paths absolute for the worker and leaves URLs alone', () => {
    expect(workerLocation('a/b.csv', '/home/me')).toBe('/home/me/a/b.csv');
    expect(workerLocation('/abs/b.csv', '/home/me')).toBe('/abs/b.csv');
    expect(workerLocation('s3://bucket/key.csv', '/home/me')).toBe('s3://bucket/key.csv');
    expect(workerLocation('https://example.com/x.csv', '/home/me')).toBe('https://example.com/x.csv');
  });

  it("reads only the Temporal settings, with the worker's defaults, and needs no Storage token", () => {
    expect(cliSettings({ SAPI_URL: 'https://connection.example.com' })).toEqual({
      address: 'localhost:7233',
      namespace: 'default',
      taskQueue: 'sapi-temporal',
    });
    expect(() => cliSettings({ TEMPORAL_ADDRESS: '' })).toThrow(/TEMPORAL_ADDRESS/);
  });
});
