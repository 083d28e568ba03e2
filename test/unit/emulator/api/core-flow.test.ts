import { createBucket, createTable, importTable, useMemoryEmulator, waitForJob } from '../../../harness/emulator-api';

describe('emulator core flow', () => {
  // Exports read back as one file with a header (slicedExports: false); slicing is tested in sliced-exports.test.ts.
  const env = useMemoryEmulator({ slicedExports: false });

  test('a table created from an importer upload holds the CSV rows', async () => {
    const bucketId = await createBucket(env.api, 'core');
    const job = await createTable(env.api, bucketId, 'people', 'id,name\n1,Ann\n2,"Bob ""B"""\n');
    expect(job.status).toBe('success');
    expect(job.operationName).toBe('tableCreate');
    expect(job.results.id).toBe('in.c-core.people');
    const data = await env.emulator.readTable('in.c-core.people');
    expect(data).toEqual({
      columns: ['id', 'name'],
      rows: [
        ['1', 'Ann'],
        ['2', 'Bob "B"'],
      ],
    });
  });

  test('an incremental load appends rows and a full load replaces them', async () => {
    const inc = await importTable(env.api, 'in.c-core.people', 'id,name\n3,Cid\n', { incremental: true });
    expect(inc.status).toBe('success');
    expect(inc.results).toMatchObject({ importedRowsCount: 1, totalRowsCount: 3, importedColumns: ['id', 'name'] });
    const full = await importTable(env.api, 'in.c-core.people', 'id,name\n9,Zed\n');
    expect(full.results.totalRowsCount).toBe(1);
    expect((await env.emulator.readTable('in.c-core.people')).rows).toEqual([['9', 'Zed']]);
  });

  test('an export produces a downloadable CSV file with a header', async () => {
    const res = await env.api('POST', '/tables/in.c-core.people/export-async', { json: {} });
    expect(res.status).toBe(202);
    const job = await waitForJob(env.api, res.body.id);
    expect(job).toMatchObject({ status: 'success', operationName: 'tableExport', results: { cacheHit: false } });
    const file = await env.api('GET', `/files/${job.results.file.id}`);
    expect(file.body.tags).toEqual(['table-export']);
    const csv = await fetch(file.body.url).then((r) => r.text());
    expect(csv).toBe('"id","name"\n"9","Zed"\n');
  });
});
