import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../../../src/cli';
import { buildProgram } from '../../../src/cli/program';
import type { TransferRun, TransferRunner } from '../../../src/cli/context';
import { summarizeImport } from '../../../src/cli/import';
import { parseColumnFlag } from '../../../src/cli/typed-columns';

/** Parses a command line with a recorder in place of the workflow runner; nothing connects anywhere. */
async function parse(args: string[]): Promise<TransferRun> {
  const runs: TransferRun[] = [];
  const record: TransferRunner = async (transfer) => void runs.push(transfer as unknown as TransferRun);
  await buildProgram({ env: {}, runTransfer: record }).parseAsync(args, { from: 'user' });
  expect(runs).toHaveLength(1);
  return runs[0]!;
}

describe('typed-table and metadata flags of sapi-temporal import', () => {
  let stderr: jest.SpyInstance;
  let dir: string;
  beforeAll(() => (dir = mkdtempSync(join(tmpdir(), 'typed-cli-'))));
  beforeEach(() => (stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true)));
  afterEach(() => stderr.mockRestore());

  const base = ['import', 's3://landing/orders.csv', '--bucket', 'in.c-main', '--table', 'orders'];

  it('turns repeated --column flags, --description and --metadata into typedColumns, description and metadata', async () => {
    const transfer = await parse([
      ...base,
      '--column',
      'id:INTEGER NOT NULL',
      '--column',
      'price:number(10, 2)',
      '--column',
      'name:VARCHAR(255)',
      '--column',
      'day:DATE',
      '--primary-key',
      'id',
      '--description',
      'Orders, typed',
      '--metadata',
      'owner=data-team',
      '--metadata',
      'KBC.note=a=b',
      '--metadata-provider',
      'user',
    ]);
    expect(transfer.input).toEqual({
      source: 's3://landing/orders.csv',
      bucketId: 'in.c-main',
      table: 'orders',
      mode: 'create',
      primaryKey: ['id'],
      typedColumns: [
        { name: 'id', definition: { type: 'INTEGER', nullable: false } },
        { name: 'price', definition: { type: 'NUMBER', length: '10,2' } },
        { name: 'name', definition: { type: 'VARCHAR', length: '255' } },
        { name: 'day', definition: { type: 'DATE' } },
      ],
      description: 'Orders, typed',
      metadata: { owner: 'data-team', 'KBC.note': 'a=b' },
      metadataProvider: 'user',
    });
  });

  it('reads --columns-file in the tables-definition shape, taking its primaryKeysNames when --primary-key is absent', async () => {
    const file = join(dir, 'defs.json');
    writeFileSync(
      file,
      JSON.stringify({
        primaryKeysNames: ['id'],
        columns: [
          { name: 'id', definition: { type: 'integer', nullable: false } },
          { name: 'amount', definition: { type: 'NUMERIC', length: 12, default: 0 } },
        ],
      }),
    );
    const transfer = await parse([...base, '--columns-file', file]);
    expect(transfer.input).toMatchObject({
      primaryKey: ['id'],
      typedColumns: [
        { name: 'id', definition: { type: 'INTEGER', nullable: false } },
        { name: 'amount', definition: { type: 'NUMERIC', length: '12', default: '0' } },
      ],
    });
  });

  it('reads a --columns-file that is only the columns list, and --primary-key wins over the file', async () => {
    const file = join(dir, 'list.json');
    writeFileSync(file, JSON.stringify([{ name: 'a', definition: { type: 'VARCHAR' } }]));
    const transfer = await parse([...base, '--columns-file', file, '--primary-key', 'a']);
    expect(transfer.input).toMatchObject({ primaryKey: ['a'], typedColumns: [{ name: 'a', definition: { type: 'VARCHAR' } }] });
  });

  it('parses name:TYPE, name:TYPE(len), name:NUMBER(p,s) and NOT NULL, and refuses anything else naming the form', () => {
    expect(parseColumnFlag('ts:timestamp_ntz')).toEqual({ name: 'ts', definition: { type: 'TIMESTAMP_NTZ' } });
    expect(parseColumnFlag(' x : varchar ( 3 ) not null ')).toEqual({ name: 'x', definition: { type: 'VARCHAR', length: '3', nullable: false } });
    for (const bad of ['id', 'id:', ':INTEGER', 'id:INT(a)', 'bad-name:INTEGER', 'id:INTEGER NULL']) {
      expect(() => parseColumnFlag(bad)).toThrow(/expected name:TYPE, name:TYPE\(length\)/);
    }
  });

  it.each([
    [['--column', 'id:INTEGER', '--mode', 'load'], /--column\/--columns-file need --mode create/],
    [['--column', 'id:INTEGER', '--columns-file', 'x.json'], /with --column or with --columns-file, not both/],
    [['--column', 'id'], /expected name:TYPE/],
    [['--metadata', 'novalue'], /expected key=value/],
    [['--metadata-provider', 'me'], /--metadata-provider needs --description or --metadata/],
    [['--columns-file', '/nonexistent/defs.json'], /--columns-file \/nonexistent\/defs\.json: ENOENT/],
  ])('exits 2 naming the problem for %j, starting nothing', async (extra, message) => {
    const runTransfer = jest.fn();
    expect(await run(['node', 'sapi-temporal', ...base, ...extra], { env: {}, runTransfer })).toBe(2);
    expect(runTransfer).not.toHaveBeenCalled();
    expect(stderr.mock.calls.map(([chunk]) => String(chunk)).join('')).toMatch(message);
  });

  it('says in the summary that the table is typed and how many metadata entries were set, and nothing of it for a plain import', () => {
    const result = { tableId: 'in.c-a.t', fileId: 1, jobId: 2, importedRowsCount: 3, bytes: 10 };
    expect(summarizeImport({ ...result, typed: true, metadataSet: 2 }).fields.slice(-2)).toEqual([
      ['typed', 'yes'],
      ['metadata', '2 entries set'],
    ]);
    expect(summarizeImport({ ...result, typed: false, metadataSet: 1 }).fields.slice(-1)).toEqual([['metadata', '1 entry set']]);
    expect(summarizeImport({ ...result, typed: false }).fields.map(([label]) => label)).toEqual(['table', 'rows', 'bytes', 'sha256', 'file id', 'job id']);
  });

  it('exits 2 naming the entry of a --columns-file without a type', async () => {
    const file = join(dir, 'untyped.json');
    writeFileSync(
      file,
      JSON.stringify({
        columns: [
          { name: 'a', definition: { type: 'INTEGER' } },
          { name: 'b', definition: {} },
        ],
      }),
    );
    const runTransfer = jest.fn();
    expect(await run(['node', 'sapi-temporal', ...base, '--columns-file', file], { env: {}, runTransfer })).toBe(2);
    expect(stderr.mock.calls.map(([chunk]) => String(chunk)).join('')).toMatch(/columns\[1\] \(b\) needs "definition": \{"type": …\}/);
  });
});
