import { gunzipSync } from 'node:zlib';
import { type Json, createBucket, createTable, expectSuccess, readObject, s3With, useEmulator, waitForJob } from './support';

/**
 * Exports as on the service's Snowflake stacks (the default): every `export-async` result is a sliced, headerless
 * file, one slice and a manifest for a small table; clients add the header from the table's columns.
 */
describe('sliced exports by default', () => {
  const env = useEmulator();

  beforeAll(async () => {
    await createBucket(env.api, 'sl');
    expectSuccess(await createTable(env.api, 'in.c-sl', 'small', 'a,b\n1,"x""y"\n2,z\n'));
    expectSuccess(await createTable(env.api, 'in.c-sl', 'empty', 'a,b\n'));
  });

  async function exported(tableId: string, params: Record<string, unknown> = {}): Promise<{ file: Json; manifest: Json; text: string }> {
    const res = await env.api('POST', `/tables/${tableId}/export-async`, { json: params });
    const job = expectSuccess(await waitForJob(env.api, res.body.id));
    const file = (await env.api('GET', `/files/${job.results.file.id}?federationToken=1`)).body;
    const manifest: Json = await fetch(file.url).then((r) => r.json());
    const s3 = s3With(env.minio, file.credentials);
    try {
      const parts = await Promise.all(
        manifest.entries.map((e: { url: string }) => readObject(s3, file.s3Path.bucket, e.url.replace(`s3://${file.s3Path.bucket}/`, ''))),
      );
      return { file, manifest, text: parts.map((p) => (p[0] === 0x1f && p[1] === 0x8b ? gunzipSync(p) : p).toString()).join('') };
    } finally {
      s3.destroy();
    }
  }

  test('a small table exports as one headerless slice and a manifest', async () => {
    const { file, manifest, text } = await exported('in.c-sl.small');
    expect(file).toMatchObject({ isSliced: true, tags: ['table-export'], name: 'in.c-sl.small.csv' });
    expect(manifest).toEqual({ entries: [{ url: `s3://sapi-files/${file.s3Path.key}part_00000`, mandatory: true }] });
    expect(text).toBe('"1","x""y"\n"2","z"\n');
    expect(file.sizeBytes).toBe(Buffer.byteLength(text));
  });

  test('gzipped, and an empty table: still sliced, the slice gzipped or empty', async () => {
    const gz = await exported('in.c-sl.small', { gzip: true });
    expect(gz.file).toMatchObject({ isSliced: true, name: 'in.c-sl.small.csv.gz' });
    expect(gz.manifest.entries[0].url).toMatch(/part_00000\.gz$/);
    expect(gz.text).toBe('"1","x""y"\n"2","z"\n');
    const empty = await exported('in.c-sl.empty');
    expect(empty.file.isSliced).toBe(true);
    expect(empty.manifest.entries).toHaveLength(1);
    expect(empty.text).toBe('');
  });

  test('the index says exports are sliced', async () => {
    expect((await env.api('GET', '', { token: null })).body.emulator).toMatchObject({ slicedExports: true });
  });
});
