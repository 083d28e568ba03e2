import { gunzipSync } from 'node:zlib';
import { type Json, createBucket, createTable, expectSuccess, importTable, readObject, s3With, useEmulator, waitForJob } from './support';

describe('table exports', () => {
  // 60 bytes per slice: the 10-row table below exports as several slices.
  // Slicing by size (slicedExports: false): a table that fits one slice exports as one file with a header.
  const env = useEmulator({ sliceSizeBytes: 60, slicedExports: false });
  const T = 'in.c-exp.rows';

  beforeAll(async () => {
    await createBucket(env.api, 'exp');
    const rows = Array.from({ length: 10 }, (_, i) => `${i},name${i},${i % 2 ? 'odd' : 'even'}`).join('\n');
    expectSuccess(await createTable(env.api, 'in.c-exp', 'rows', `id,name,kind\n${rows}\n`));
    expectSuccess(await createTable(env.api, 'in.c-exp', 'small', 'a,b\n1,"x""y"\n'));
  });

  async function exportJob(tableId: string, params: Record<string, unknown> | string): Promise<{ job: Json; file: Json }> {
    const res =
      typeof params === 'string'
        ? await env.api('POST', `/tables/${tableId}/export-async`, { form: params })
        : await env.api('POST', `/tables/${tableId}/export-async`, { json: params });
    expect(res.status).toBe(202);
    const job = expectSuccess(await waitForJob(env.api, res.body.id));
    const file = (await env.api('GET', `/files/${job.results.file.id}?federationToken=1`)).body;
    return { job, file };
  }

  /** Downloads a file like a client: manifest + slices with the read credentials, gunzipped when needed. */
  async function download(file: Json): Promise<string> {
    const s3 = s3With(env.minio, file.credentials);
    try {
      const keys: string[] = file.isSliced
        ? JSON.parse((await readObject(s3, file.s3Path.bucket, `${file.s3Path.key}manifest`)).toString()).entries.map((e: { url: string }) =>
            e.url.replace(`s3://${file.s3Path.bucket}/`, ''),
          )
        : [file.s3Path.key];
      const parts = await Promise.all(keys.map((k) => readObject(s3, file.s3Path.bucket, k)));
      return parts.map((p) => (p[0] === 0x1f && p[1] === 0x8b ? gunzipSync(p) : p).toString()).join('');
    } finally {
      s3.destroy();
    }
  }

  test('a small table exports as one CSV file with a header and every value quoted', async () => {
    const { job, file } = await exportJob('in.c-exp.small', {});
    expect(job).toMatchObject({ operationName: 'tableExport', tableId: 'in.c-exp.small', results: { cacheHit: false } });
    expect(file).toMatchObject({ isSliced: false, tags: ['table-export'], name: 'in.c-exp.small.csv' });
    expect(await download(file)).toBe('"a","b"\n"1","x""y"\n');
    expect(file.sizeBytes).toBe(Buffer.byteLength('"a","b"\n"1","x""y"\n'));
  });

  test('a table larger than the slice size exports as headerless slices and a manifest', async () => {
    const { file } = await exportJob(T, {});
    expect(file.isSliced).toBe(true);
    const manifest: Json = await fetch(file.url).then((r) => r.json());
    expect(manifest.entries.length).toBeGreaterThan(2);
    for (const e of manifest.entries)
      expect(e).toEqual({ url: expect.stringMatching(new RegExp(`^s3://sapi-files/${file.s3Path.key}part_\\d{5}$`)), mandatory: true });
    const text = await download(file);
    expect(text.split('\n').filter(Boolean)).toHaveLength(10);
    expect(text.startsWith('"0","name0","even"\n')).toBe(true);
  });

  test('a gzipped sliced export has gzipped slices that concatenate to the rows', async () => {
    const { file } = await exportJob(T, { gzip: true });
    expect(file.name).toBe(`${T}.csv.gz`);
    expect(file.isSliced).toBe(true);
    const manifest: Json = await fetch(file.url).then((r) => r.json());
    expect(manifest.entries[0].url).toMatch(/\.gz$/);
    expect((await download(file)).split('\n').filter(Boolean)).toHaveLength(10);
  });

  test('columns, whereFilters, orderBy and limit shape the export', async () => {
    const { file } = await exportJob(T, {
      columns: 'id,kind',
      whereFilters: [
        { column: 'kind', operator: 'eq', values: ['odd'] },
        { column: 'id', operator: 'gt', values: ['2'], dataType: 'INTEGER' },
      ],
      orderBy: [{ column: 'id', order: 'DESC', dataType: 'INTEGER' }],
      limit: 2,
    });
    expect(await download(file)).toBe('"id","kind"\n"9","odd"\n"7","odd"\n');
  });

  test('export parameters arrive form-encoded too (nested whereFilters, legacy whereColumn)', async () => {
    const a = await exportJob(
      T,
      'columns=id&whereFilters[0][column]=id&whereFilters[0][operator]=ne&whereFilters[0][values][]=0&whereFilters[0][values][]=1&orderBy[0][column]=id&orderBy[0][order]=ASC&limit=2',
    );
    expect(await download(a.file)).toBe('"id"\n"2"\n"3"\n');
    const b = await exportJob(T, 'columns=id&whereColumn=id&whereOperator=eq&whereValues[]=5');
    expect(await download(b.file)).toBe('"id"\n"5"\n');
  });

  test('JSON nulls for list parameters count as absent, as the service reads them, not as a 500', async () => {
    const { file } = await exportJob(T, { columns: 'id', whereFilters: null, orderBy: null, limit: 1 });
    expect(await download(file)).toBe('"id"\n"0"\n');
  });

  test('changedSince exports only rows written since then', async () => {
    const before = Math.floor(Date.now() / 1000);
    await new Promise((r) => setTimeout(r, 1100));
    expectSuccess(await importTable(env.api, T, 'id,name,kind\n100,new,odd\n', { incremental: true }));
    const { file } = await exportJob(T, { columns: 'id', changedSince: String(before + 1) });
    expect(await download(file)).toBe('"id"\n"100"\n');
    const { file: all } = await exportJob(T, { columns: 'id', changedSince: '-1 days' });
    expect((await download(all)).split('\n').filter(Boolean).length).toBeGreaterThan(10);
  });

  test('bad export parameters are rejected with 400', async () => {
    const cases: Record<string, unknown>[] = [
      { columns: 'nope' },
      { whereFilters: [{ column: 'id', operator: 'like', values: ['1'] }] },
      { whereFilters: [{ column: 'missing', operator: 'eq', values: ['1'] }] },
      { whereFilters: [{ column: 'id', operator: 'eq', values: [] }] },
      { orderBy: [{ column: 'id', order: 'UP' }] },
      { limit: 'many' },
      { changedSince: 'yesterday-ish' },
      { gzip: 'perhaps' },
    ];
    for (const params of cases) {
      const res = await env.api('POST', `/tables/${T}/export-async`, { json: params });
      expect({ params, status: res.status }).toEqual({ params, status: 400 });
      expect(res.body.exceptionId).toMatch(/^exception-/);
    }
  });

  test('an exported file can be loaded back into a table', async () => {
    const { file } = await exportJob('in.c-exp.small', {});
    const res = await env.api('POST', '/buckets/in.c-exp/tables-async', { json: { name: 'roundtrip', dataFileId: file.id } });
    expectSuccess(await waitForJob(env.api, res.body.id));
    expect(await env.emulator.readTable('in.c-exp.roundtrip')).toEqual({ columns: ['a', 'b'], rows: [['1', 'x"y']] });
  });

  test('a sliced export can be loaded back with its table columns', async () => {
    const { file } = await exportJob(T, { columns: 'id,name,kind' });
    expect(file.isSliced).toBe(true);
    const res = await env.api('POST', '/buckets/in.c-exp/tables-async', { json: { name: 'fromsliced', dataFileId: file.id, columns: ['id', 'name', 'kind'] } });
    const job = expectSuccess(await waitForJob(env.api, res.body.id));
    expect(job.results.rowsCount).toBe(11);
  });

  test('values with newlines, enclosures and commas are cut into slices only between records', async () => {
    const values = ['a\n"b"\n', '"', ',\n,', '', 'x'.repeat(70), '\n\n"\n"'];
    const csv = `id,v\n${values.map((v, i) => `${i},"${v.replace(/"/g, '""')}"`).join('\n')}\n`;
    expectSuccess(await createTable(env.api, 'in.c-exp', 'tricky', csv));
    const { file } = await exportJob('in.c-exp.tricky', {});
    expect(file.isSliced).toBe(true);
    const manifest: Json = await fetch(file.url).then((r) => r.json());
    expect(manifest.entries.length).toBe(2);
    const s3 = s3With(env.minio, file.credentials);
    const slices = await Promise.all(
      manifest.entries.map(async (e: { url: string }) =>
        (await readObject(s3, file.s3Path.bucket, e.url.replace(`s3://${file.s3Path.bucket}/`, ''))).toString(),
      ),
    );
    s3.destroy();
    // every slice holds whole records: it ends with a closing enclosure and a newline
    for (const slice of slices) expect(slice).toMatch(/"\n$/);
    expect(slices.join('')).toBe(values.map((v, i) => `"${i}","${v.replace(/"/g, '""')}"\n`).join(''));
  });
});
