import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { ExportTableInput, ExportTableResult, ImportTableInput, ImportTableResult } from '../../../src/contracts/transfer';
import { startSapiTestEnv, type SapiTestEnv } from '../../harness/sapi-env';

describe('exportTableWorkflow against the emulator', () => {
  let env: SapiTestEnv;
  let n = 0;
  // small slices so a modest table exports as many slices
  beforeAll(async () => (env = await startSapiTestEnv('export', { emulator: { sliceSizeBytes: 64 * 1024 } })));
  afterAll(() => env?.stop());

  const execute = <T>(type: string, input: object) =>
    env.client.workflow.execute(type, {
      taskQueue: env.taskQueue,
      workflowId: `${type}-${Date.now()}-${++n}`,
      args: [{ polling: { initialMs: 200, maxMs: 1000 }, ...input }],
    }) as Promise<T>;
  const importTable = (input: ImportTableInput) => execute<ImportTableResult>('importTableWorkflow', input);
  const exportTable = (input: ExportTableInput) => execute<ExportTableResult>('exportTableWorkflow', input);

  function csv(rows: number): string {
    const lines = ['id,name,note'];
    for (let i = 0; i < rows; i++) lines.push(`${i},name-${i},"note ${i}, with ""quotes"""`);
    return `${lines.join('\n')}\n`;
  }

  it('exports a small table to one file whose rows equal the source', async () => {
    const source = csv(10);
    writeFileSync(join(env.dataDir, 'small.csv'), source);
    await importTable({ source: join(env.dataDir, 'small.csv'), bucketId: 'in.c-exp', createBucket: true, table: 'small' });
    const destination = join(env.dataDir, 'out', 'small.csv');
    const result = await exportTable({ tableId: 'in.c-exp.small', destination });
    // The emulator slices every export, as a Snowflake stack does: one headerless slice, the header added by the download.
    expect(result).toMatchObject({ path: destination, sliced: true, slices: 1 });
    const downloaded = readFileSync(destination);
    expect(result.bytes).toBe(downloaded.length);
    expect(result.sha256).toBe(createHash('sha256').update(downloaded).digest('hex'));
    expect(parse(downloaded.toString())).toEqual(parse(source));
  });

  it('exports a big table as ≥ 10 slices and concatenates them in manifest order with a header', async () => {
    const source = csv(20_000);
    writeFileSync(join(env.dataDir, 'big.csv'), source);
    await importTable({ source: join(env.dataDir, 'big.csv'), bucketId: 'in.c-exp', table: 'big' });
    const destination = join(env.dataDir, 'out', 'big.csv');
    const result = await exportTable({ tableId: 'in.c-exp.big', destination });
    expect(result.sliced).toBe(true);
    expect(result.slices).toBeGreaterThanOrEqual(10);
    const rows = parse(readFileSync(destination, 'utf8'));
    expect(rows[0]).toEqual(['id', 'name', 'note']);
    expect(rows).toEqual(parse(source)); // row for row, in order
  });

  it('exports selected columns gzipped and decompresses them, or keeps the gzip when asked', async () => {
    const destination = join(env.dataDir, 'out', 'cols.csv');
    const plain = await exportTable({ tableId: 'in.c-exp.small', destination, columns: ['name'], gzip: true });
    expect(parse(readFileSync(plain.path, 'utf8'))).toEqual([['name'], ...Array.from({ length: 10 }, (_, i) => [`name-${i}`])]);
    const kept = await exportTable({ tableId: 'in.c-exp.small', destination: `${destination}.gz`, columns: ['id'], gzip: true, keepGzip: true });
    expect(parse(gunzipSync(readFileSync(kept.path)).toString())[1]).toEqual(['0']);
  });

  it('retries a download whose read credentials are about to expire, with fresh ones, and writes the same rows', async () => {
    env.emulator.faults.expireCredentials({ access: 'read', expiresInSeconds: 60, times: 1 });
    const details = () => env.emulator.requests.filter((r) => r.method === 'GET' && /\/files\/\d+$/.test(r.path)).length;
    const before = details();
    const destination = join(env.dataDir, 'out', 'expiring.csv');
    const result = await exportTable({ tableId: 'in.c-exp.small', destination });
    expect(details() - before).toBe(2); // the first attempt's credentials were refused before any byte moved
    expect(parse(readFileSync(result.path, 'utf8'))).toEqual(parse(csv(10)));
  });

  it('fails clearly for an unknown table', async () => {
    await expect(exportTable({ tableId: 'in.c-exp.nope', destination: join(env.dataDir, 'out', 'nope.csv') })).rejects.toMatchObject({
      cause: { cause: { type: 'SAPI_NOT_FOUND' } },
    });
  });
});

/** A small RFC 4180 reader for assertions (quotes, doubled quotes, newlines in fields). */
function parse(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  const endField = () => {
    row.push(field);
    field = '';
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') endField();
    else if (c === '\n') {
      endField();
      rows.push(row);
      row = [];
    } else if (c !== '\r') field += c;
  }
  if (field || row.length) {
    endField();
    rows.push(row);
  }
  return rows;
}
