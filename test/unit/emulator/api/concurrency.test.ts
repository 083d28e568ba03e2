import { createBucket, expectSuccess, uploadViaImporter, useMemoryEmulator, waitForJob } from '../../../harness/emulator-api';

describe('concurrent jobs', () => {
  // Exports read back as one file with a header (slicedExports: false); slicing is tested in sliced-exports.test.ts.
  const env = useMemoryEmulator({ slicedExports: false });

  test('loads into different tables run in parallel without conflicts', async () => {
    await createBucket(env.api, 'par');
    const count = 12;
    const files = await Promise.all(Array.from({ length: count }, (_, i) => uploadViaImporter(env.api, `id,v\n${i},a\n${i + 100},b\n`)));
    const created = await Promise.all(
      files.map((dataFileId, i) => env.api('POST', '/buckets/in.c-par/tables-async', { json: { name: `t${i}`, dataFileId, primaryKey: 'id' } })),
    );
    const jobs = await Promise.all(created.map((r) => waitForJob(env.api, r.body.id)));
    jobs.forEach(expectSuccess);
    const more = await Promise.all(Array.from({ length: count }, (_, i) => uploadViaImporter(env.api, `id,v,extra\n${i},A,x\n`)));
    const loads = await Promise.all(
      more.map((dataFileId, i) => env.api('POST', `/tables/in.c-par.t${i}/import-async`, { json: { dataFileId, incremental: true } })),
    );
    (await Promise.all(loads.map((r) => waitForJob(env.api, r.body.id)))).forEach(expectSuccess);
    for (let i = 0; i < count; i++) {
      const data = await env.emulator.readTable(`in.c-par.t${i}`);
      expect(data.columns).toEqual(['id', 'v', 'extra']);
      expect(data.rows).toHaveLength(2);
      expect(data.rows.find((r) => r[0] === String(i))).toEqual([String(i), 'A', 'x']);
    }
  });

  test('an empty table exports as a header-only file', async () => {
    const fileId = await uploadViaImporter(env.api, 'a,b\n');
    expectSuccess(
      await waitForJob(env.api, (await env.api('POST', '/buckets/in.c-par/tables-async', { json: { name: 'empty', dataFileId: fileId } })).body.id),
    );
    const job = expectSuccess(await waitForJob(env.api, (await env.api('POST', '/tables/in.c-par.empty/export-async', { json: {} })).body.id));
    const file = (await env.api('GET', `/files/${job.results.file.id}`)).body;
    expect(file.isSliced).toBe(false);
    expect(await fetch(file.url).then((r) => r.text())).toBe('"a","b"\n');
  });
});
