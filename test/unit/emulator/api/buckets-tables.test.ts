import { createBucket, createTable, uploadViaImporter, useMemoryEmulator, waitForJob } from '../../../harness/emulator-api';

describe('buckets and tables', () => {
  const env = useMemoryEmulator();

  test('a bucket is created as <stage>.c-<name> and a second create fails with alreadyExists', async () => {
    const res = await env.api('POST', '/buckets', { form: { name: 'sales', stage: 'out', description: 'd' } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ id: 'out.c-sales', name: 'c-sales', stage: 'out', description: 'd' });
    const again = await env.api('POST', '/buckets', { json: { name: 'sales', stage: 'out' } });
    expect(again.status).toBe(400);
    expect(again.body.code).toBe('storage.buckets.alreadyExists');
  });

  test('bucket creation rejects bad names and stages', async () => {
    expect((await env.api('POST', '/buckets', { json: { name: 'bad name' } })).status).toBe(400);
    expect((await env.api('POST', '/buckets', { json: { name: 'ok', stage: 'sys' } })).status).toBe(400);
    expect((await env.api('POST', '/buckets', { json: {} })).status).toBe(400);
  });

  test('buckets are listed and shown; an unknown one is 404 storage.buckets.notFound', async () => {
    const list = await env.api('GET', '/buckets');
    expect(list.body.map((b: { id: string }) => b.id)).toContain('out.c-sales');
    expect((await env.api('GET', '/buckets/out.c-sales')).body.id).toBe('out.c-sales');
    const missing = await env.api('GET', '/buckets/in.c-missing');
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('storage.buckets.notFound');
    expect((await env.api('GET', '/buckets/in.c-missing/tables')).status).toBe(404);
    expect((await env.api('DELETE', '/buckets/in.c-missing')).status).toBe(404);
  });

  test('a table detail has its columns, primary key, row count and bucket', async () => {
    const bucketId = await createBucket(env.api, 'detail');
    const job = await createTable(env.api, bucketId, 'items', 'id,name\n1,a\n2,b\n', { primaryKey: 'id' });
    expect(job.status).toBe('success');
    const res = await env.api('GET', '/tables/in.c-detail.items');
    expect(res.body).toMatchObject({
      id: 'in.c-detail.items',
      name: 'items',
      columns: ['id', 'name'],
      primaryKey: ['id'],
      rowsCount: 2,
      bucket: { id: 'in.c-detail' },
    });
    expect(res.body.dataSizeBytes).toBeGreaterThan(0);
    expect(res.body.lastImportDate).toMatch(/\+0000$/);
    expect(res.body.created).toMatch(/\+0000$/);
    const tables = await env.api('GET', '/buckets/in.c-detail/tables');
    expect(tables.body.map((t: { id: string }) => t.id)).toEqual(['in.c-detail.items']);
    expect((await env.api('GET', '/tables')).body.map((t: { id: string }) => t.id)).toContain('in.c-detail.items');
  });

  test('creating a table that exists accepts the request and fails the job with alreadyExists', async () => {
    const job = await createTable(env.api, 'in.c-detail', 'items', 'id\n1\n');
    expect(job.status).toBe('error');
    expect(job.error).toMatchObject({ code: 'storage.tables.alreadyExists' });
    expect(job.error.message).toMatch(/already exists/);
  });

  test('tables-async rejects an unknown bucket, an unknown file and missing parameters', async () => {
    const fileId = await uploadViaImporter(env.api, 'a\n1\n');
    const noBucket = await env.api('POST', '/buckets/in.c-nope/tables-async', { json: { name: 't', dataFileId: fileId } });
    expect(noBucket.status).toBe(404);
    expect(noBucket.body.code).toBe('storage.buckets.notFound');
    const noFile = await env.api('POST', '/buckets/in.c-detail/tables-async', { json: { name: 't', dataFileId: 987654 } });
    expect(noFile.status).toBe(404);
    expect(noFile.body.code).toBe('storage.files.notFound');
    expect((await env.api('POST', '/buckets/in.c-detail/tables-async', { json: { name: 't' } })).status).toBe(400);
    expect((await env.api('POST', '/buckets/in.c-detail/tables-async', { json: { dataFileId: fileId } })).status).toBe(400);
    expect((await env.api('POST', '/buckets/in.c-detail/tables-async', { json: { name: 't', dataFileId: fileId, delimiter: ';;' } })).status).toBe(400);
    expect((await env.api('POST', '/buckets/in.c-detail/tables-async', { json: { name: 't', dataFileId: fileId, escapedBy: '\\' } })).status).toBe(400);
  });

  test('a primary key that is not a file column fails the job', async () => {
    const job = await createTable(env.api, 'in.c-detail', 'badpk', 'a,b\n1,2\n', { primaryKey: 'c' });
    expect(job.status).toBe('error');
    expect(job.error.message).toMatch(/primary key/);
    expect((await env.api('GET', '/tables/in.c-detail.badpk')).status).toBe(404);
  });

  test('deleting a table removes it; unknown tables are 404 storage.tables.notFound', async () => {
    await createTable(env.api, 'in.c-detail', 'temp', 'a\n1\n');
    expect((await env.api('DELETE', '/tables/in.c-detail.temp')).status).toBe(204);
    const res = await env.api('GET', '/tables/in.c-detail.temp');
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('storage.tables.notFound');
    await expect(env.emulator.readTable('in.c-detail.temp')).rejects.toThrow(/not found/);
    expect((await env.api('POST', '/tables/in.c-detail.temp/import-async', { json: { dataFileId: 1 } })).status).toBe(404);
    expect((await env.api('POST', '/tables/in.c-detail.temp/export-async', { json: {} })).status).toBe(404);
  });

  test('a bucket with tables is deleted only with force, which drops its tables', async () => {
    const refused = await env.api('DELETE', '/buckets/in.c-detail');
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('storage.buckets.notEmpty');
    expect((await env.api('DELETE', '/buckets/in.c-detail?force=1')).status).toBe(204);
    expect((await env.api('GET', '/buckets/in.c-detail')).status).toBe(404);
    expect((await env.api('GET', '/tables/in.c-detail.items')).status).toBe(404);
  });

  test('an asynchronous bucket delete answers a job that drops the bucket', async () => {
    await createBucket(env.api, 'asyncdrop');
    const res = await env.api('DELETE', '/buckets/in.c-asyncdrop?force=True&async=True');
    expect(res.status).toBe(202);
    expect((await waitForJob(env.api, res.body.id)).status).toBe('success');
    expect((await env.api('GET', '/buckets/in.c-asyncdrop')).status).toBe(404);
  });

  test('a bucket detail lists its tables (the bucket list gives their URL); columns, metadata and columnMetadata only when include names them', async () => {
    const bucketId = await createBucket(env.api, 'listed');
    const empty = await env.api('GET', `/buckets/${bucketId}`);
    expect(empty.body.tables).toEqual([]);
    expect(empty.body.attributes).toEqual([]);
    await createTable(env.api, bucketId, 'rows', 'id,name\n1,a\n');
    await env.api('POST', `/tables/${bucketId}.rows/metadata`, {
      json: { provider: 'user', metadata: [{ key: 'k', value: 'v' }], columnsMetadata: { id: [{ key: 'ck', value: 'cv' }] } },
    });
    const plain = (await env.api('GET', `/buckets/${bucketId}`)).body;
    expect(plain.tables).toHaveLength(1);
    expect(plain.tables[0]).toMatchObject({
      id: `${bucketId}.rows`,
      name: 'rows',
      uri: `${env.emulator.url}/v2/storage/tables/${bucketId}.rows`,
      rowsCount: 1,
      primaryKey: [],
    });
    for (const absent of ['bucket', 'columns', 'metadata', 'columnMetadata']) expect(plain.tables[0]).not.toHaveProperty(absent);
    const withMetadata = (await env.api('GET', `/buckets/${bucketId}?include=metadata`)).body.tables[0];
    expect(withMetadata.metadata).toEqual([expect.objectContaining({ key: 'k', value: 'v', provider: 'user' })]);
    expect(withMetadata).not.toHaveProperty('columns');
    const withColumns = (await env.api('GET', `/buckets/${bucketId}?include=metadata,columns`)).body.tables[0];
    expect(withColumns.columns).toEqual(['id', 'name']);
    expect(withColumns).not.toHaveProperty('columnMetadata');
    const withColumnMetadata = (await env.api('GET', `/buckets/${bucketId}?include=columnMetadata`)).body.tables[0];
    expect(withColumnMetadata.columnMetadata).toEqual({ id: [expect.objectContaining({ key: 'ck', value: 'cv' })] });
    const listed = (await env.api('GET', '/buckets')).body.find((b: { id: string }) => b.id === bucketId);
    expect(listed.tables).toBe(`${env.emulator.url}/v2/storage/buckets/${bucketId}/tables`);
  });
});
