import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import type { ExportTableInput, ExportTableResult, ImportTableInput, ImportTableResult } from '../../../src/contracts/transfer';
import { startFakeGcs, type FakeGcsHandle } from '../../../src/dev/gcs';
import type { UploadFileResult } from '../../../src/activities/upload-file';
import { activityResults } from '../../harness/history';
import { startSapiTestEnv, type SapiTestEnv } from '../../harness/sapi-env';
import { testStack } from '../../harness/stack-state';

/** The workflows against an emulator whose file storage is Google Cloud Storage (a real fake-gcs-server). */
describe('import and export on the Google Cloud Storage backend', () => {
  let gcs: FakeGcsHandle;
  let env: SapiTestEnv;
  let n = 0;
  beforeAll(async () => {
    gcs = await startFakeGcs({ dataDir: join(testStack().dataDir, `fake-gcs-${process.pid}-${Date.now().toString(36)}`) });
    env = await startSapiTestEnv('gcs', {
      // small export slices so a modest table exports as many slices
      emulator: { backend: 'gcp', gcs: { endpoint: gcs.endpoint, projectId: gcs.projectId, bucket: 'sapi-files' }, sliceSizeBytes: 64 * 1024 },
      env: { STORAGE_EMULATOR_HOST: gcs.endpoint },
    });
  });
  afterAll(async () => {
    await env?.stop();
    await gcs?.stop();
  });

  const execute = <T>(type: string, input: object) =>
    env.client.workflow.execute(type, {
      taskQueue: env.taskQueue,
      workflowId: `${type}-gcs-${Date.now()}-${++n}`,
      args: [{ polling: { initialMs: 200, maxMs: 1000 }, ...input }],
    }) as Promise<T>;
  const importTable = (input: ImportTableInput) => execute<ImportTableResult>('importTableWorkflow', input);
  const exportTable = (input: ExportTableInput) => execute<ExportTableResult>('exportTableWorkflow', input);

  function csv(rows: number, width = 20): string {
    const lines = ['id,name,note'];
    for (let i = 0; i < rows; i++) lines.push(`${i},name-${i},"${'n'.repeat(width)} ${i}, with ""quotes"""`);
    return `${lines.join('\n')}\n`;
  }

  async function fileDetail(id: number): Promise<Record<string, unknown>> {
    const res = await request(`${env.emulator.url}/v2/storage/files/${id}?federationToken=1`, { headers: { 'x-storageapi-token': env.emulator.token } });
    return (await res.body.json()) as Record<string, unknown>;
  }

  it('imports a 12 MiB CSV straight into an object through one resumable session of 3 chunks and the table has its rows', async () => {
    const source = csv(120_000, 60);
    expect(Buffer.byteLength(source)).toBeGreaterThan(10 * 1024 * 1024);
    writeFileSync(join(env.dataDir, 'direct.csv'), source);
    const handle = await env.client.workflow.start('importTableWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: `gcs-direct-${Date.now()}`,
      args: [{ source: join(env.dataDir, 'direct.csv'), bucketId: 'in.c-gcs', createBucket: true, table: 'direct', polling: { initialMs: 200, maxMs: 1000 } }],
    });
    const result = (await handle.result()) as ImportTableResult;
    // 5 MiB chunks (SAPI_PART_SIZE_MIB of the test env, a multiple of 256 KiB), all sent by the one attempt
    expect(await activityResults<UploadFileResult>(handle, 'uploadFile')).toEqual([expect.objectContaining({ parts: 3, partsUploaded: 3, resumed: false })]);
    expect(result).toMatchObject({ tableId: 'in.c-gcs.direct', importedRowsCount: 120_000, bytes: Buffer.byteLength(source) });
    expect(result.sha256).toBe(createHash('sha256').update(source).digest('hex'));
    const table = await env.emulator.readTable('in.c-gcs.direct');
    expect(table.columns).toEqual(['id', 'name', 'note']);
    expect(table.rows).toEqual(parse(source).slice(1));
    // the file went to GCS: the service reports it so, measures the finished object, and hands out the official fields
    const file = await fileDetail(result.fileId as number);
    expect(file).toMatchObject({ provider: 'gcp', sizeBytes: Buffer.byteLength(source), gcsPath: { bucket: 'sapi-files' } });
    expect(file.gcsCredentials).toEqual({ access_token: expect.any(String), expires_in: expect.any(Number), token_type: 'Bearer', projectId: gcs.projectId });
    const stored = await request(`${gcs.endpoint}/storage/v1/b/sapi-files/o/${encodeURIComponent((file.gcsPath as { key: string }).key)}?alt=media`);
    expect(
      createHash('sha256')
        .update(Buffer.from(await stored.body.arrayBuffer()))
        .digest('hex'),
    ).toBe(result.sha256);
  });

  it('imports headerless parts as one sliced file whose manifest lists gs:// objects, in order', async () => {
    writeFileSync(join(env.dataDir, 'head.csv'), 'id,part\n');
    await importTable({ source: join(env.dataDir, 'head.csv'), bucketId: 'in.c-gcs', createBucket: true, table: 'sliced' });
    const slices = [0, 1, 2].map((part) => {
      const path = join(env.dataDir, `slice-${part}.csv`);
      writeFileSync(path, Array.from({ length: 3 }, (_, i) => `${part * 3 + i},${part}\n`).join(''));
      return path;
    });
    const result = await importTable({
      source: slices[0] as string,
      slices,
      columns: ['id', 'part'],
      bucketId: 'in.c-gcs',
      createBucket: true,
      table: 'sliced',
      mode: 'load',
    });
    expect(result).toMatchObject({ importedRowsCount: 9 });
    expect((await env.emulator.readTable('in.c-gcs.sliced')).rows).toEqual(Array.from({ length: 9 }, (_, i) => [String(i), String(Math.floor(i / 3))]));
    const file = await fileDetail(result.fileId as number);
    const manifest = (await (await request(file.url as string)).body.json()) as { entries: { url: string }[] };
    const prefix = `gs://sapi-files/${(file.gcsPath as { key: string }).key}`;
    expect(manifest.entries.map((e) => e.url)).toEqual([0, 1, 2].map((i) => `${prefix}part_0000${i}`));
  });

  it('imports through the importer service, which stores the file in GCS too', async () => {
    const content = 'id,qty\n1,10\n2,20\n';
    writeFileSync(join(env.dataDir, 'importer.csv'), content);
    const result = await importTable({
      source: join(env.dataDir, 'importer.csv'),
      bucketId: 'in.c-gcs',
      createBucket: true,
      table: 'importer',
      via: 'importer',
    });
    expect((await env.emulator.readTable('in.c-gcs.importer')).rows).toEqual([
      ['1', '10'],
      ['2', '20'],
    ]);
    expect(await fileDetail(result.fileId as number)).toMatchObject({ provider: 'gcp', sizeBytes: Buffer.byteLength(content) });
  });

  it('answers an access token that is about to expire with a fresh prepare, and loads the rows once', async () => {
    env.emulator.faults.expireCredentials({ access: 'upload', expiresInSeconds: 60, times: 1 });
    const prepares = () => env.emulator.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/files/prepare')).length;
    const before = prepares();
    writeFileSync(join(env.dataDir, 'expiring.csv'), 'k,v\n1,a\n2,b\n');
    const result = await importTable({ source: join(env.dataDir, 'expiring.csv'), bucketId: 'in.c-gcs', createBucket: true, table: 'expiring' });
    expect(prepares() - before).toBe(2);
    expect((await env.emulator.readTable('in.c-gcs.expiring')).rows).toEqual([
      ['1', 'a'],
      ['2', 'b'],
    ]);
    expect(result.importedRowsCount).toBe(2);
  });

  it('retries a download whose read token is about to expire with a fresh one and writes the same rows', async () => {
    writeFileSync(join(env.dataDir, 'small.csv'), csv(10));
    await importTable({ source: join(env.dataDir, 'small.csv'), bucketId: 'in.c-gcs', createBucket: true, table: 'small' });
    env.emulator.faults.expireCredentials({ access: 'read', expiresInSeconds: 60, times: 1 });
    const details = () => env.emulator.requests.filter((r) => r.method === 'GET' && /\/files\/\d+$/.test(r.path)).length;
    const before = details();
    const result = await exportTable({ tableId: 'in.c-gcs.small', destination: join(env.dataDir, 'out', 'small.csv') });
    expect(details() - before).toBe(2); // the first attempt's token was refused before any byte moved
    expect(result).toMatchObject({ sliced: true, slices: 1 }); // every export sliced, as on a Snowflake stack
    expect(parse(readFileSync(result.path, 'utf8'))).toEqual(parse(csv(10)));
  });

  it('exports a table as ≥ 10 slices from GCS and concatenates them in manifest order with a header', async () => {
    const source = csv(20_000);
    writeFileSync(join(env.dataDir, 'big.csv'), source);
    await importTable({ source: join(env.dataDir, 'big.csv'), bucketId: 'in.c-gcs', createBucket: true, table: 'big' });
    const destination = join(env.dataDir, 'out', 'big.csv');
    const result = await exportTable({ tableId: 'in.c-gcs.big', destination });
    expect(result).toMatchObject({ sliced: true });
    expect(result.slices).toBeGreaterThanOrEqual(10);
    const downloaded = readFileSync(destination);
    expect(result.sha256).toBe(createHash('sha256').update(downloaded).digest('hex'));
    expect(parse(downloaded.toString('utf8'))).toEqual(parse(source)); // row for row, in order
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
