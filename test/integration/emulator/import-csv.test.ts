import { gzipSync } from 'node:zlib';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { createBucket, createTable, s3With, useEmulator, waitForJob } from './support';

// sliced and prepared files, uploaded with the store's credentials; the other CSV import cases run in-process
// (test/unit/emulator/api/import-csv.test.ts)
describe('CSV imports', () => {
  const env = useEmulator();
  const T = 'in.c-csv.base';

  beforeAll(async () => {
    await createBucket(env.api, 'csv');
    const job = await createTable(env.api, 'in.c-csv', 'base', 'id,name\n1,keep\n', { primaryKey: 'id' });
    expect(job.status).toBe('success');
  });

  test('invalid UTF-8 in a later slice of a sliced file names the slice and its line', async () => {
    const prep = (await env.api('POST', '/files/prepare', { json: { name: 'badslice.csv', isSliced: true } })).body;
    const s3 = s3With(env.minio, prep.uploadParams.credentials);
    const key = prep.uploadParams.key;
    await s3.send(new PutObjectCommand({ Bucket: 'sapi-files', Key: `${key}part_1`, Body: 'k,v\n1,a\n' }));
    await s3.send(
      new PutObjectCommand({
        Bucket: 'sapi-files',
        Key: `${key}part_2`,
        Body: gzipSync(Buffer.concat([Buffer.from('2,b\n3,'), Buffer.from([0xff]), Buffer.from('\n')])),
      }),
    );
    const manifest = { entries: [1, 2].map((i) => ({ url: `s3://sapi-files/${key}part_${i}` })) };
    await s3.send(new PutObjectCommand({ Bucket: 'sapi-files', Key: `${key}manifest`, Body: JSON.stringify(manifest) }));
    s3.destroy();
    const res = await env.api('POST', '/buckets/in.c-csv/tables-async', { json: { name: 'badslices', dataFileId: prep.id } });
    const job = await waitForJob(env.api, res.body.id);
    expect(job.status).toBe('error');
    expect(job.error.message).toMatch(/slice 1 \(.*part_2\) is not valid UTF-8: Invalid UTF-8 byte sequence on line 2 \(byte 0xff\)/);
    expect((await env.api('GET', '/tables/in.c-csv.badslices')).status).toBe(404);
  });

  test('a sliced file is read through its manifest in order, with a header only in the first slice', async () => {
    const prep = (await env.api('POST', '/files/prepare', { json: { name: 'sliced.csv', isSliced: true } })).body;
    const s3 = s3With(env.minio, prep.uploadParams.credentials);
    const key = prep.uploadParams.key;
    await s3.send(new PutObjectCommand({ Bucket: 'sapi-files', Key: `${key}part_1`, Body: 'k,v\n1,a\n' }));
    await s3.send(new PutObjectCommand({ Bucket: 'sapi-files', Key: `${key}part_2`, Body: gzipSync('2,b\n3,c\n') }));
    await s3.send(new PutObjectCommand({ Bucket: 'sapi-files', Key: `${key}part_3`, Body: 'k,v\n4,d\n' }));
    const manifest = { entries: [1, 2, 3].map((i) => ({ url: `s3://sapi-files/${key}part_${i}`, mandatory: true })) };
    await s3.send(new PutObjectCommand({ Bucket: 'sapi-files', Key: `${key}manifest`, Body: JSON.stringify(manifest) }));
    s3.destroy();
    const res = await env.api('POST', '/buckets/in.c-csv/tables-async', { json: { name: 'fromslices', dataFileId: prep.id } });
    const job = await waitForJob(env.api, res.body.id);
    expect(job.status).toBe('success');
    expect((await env.emulator.readTable('in.c-csv.fromslices')).rows).toEqual([
      ['1', 'a'],
      ['2', 'b'],
      ['3', 'c'],
      ['4', 'd'],
    ]);
    expect((await env.api('GET', `/files/${prep.id}`)).body.sizeBytes).toBeGreaterThan(0);
  });

  test('headerless slices load with columns[]', async () => {
    const prep = (await env.api('POST', '/files/prepare', { json: { name: 'sl2.csv', isSliced: true } })).body;
    const s3 = s3With(env.minio, prep.uploadParams.credentials);
    const key = prep.uploadParams.key;
    await s3.send(new PutObjectCommand({ Bucket: 'sapi-files', Key: `${key}0`, Body: '5,e\n' }));
    await s3.send(new PutObjectCommand({ Bucket: 'sapi-files', Key: `${key}1`, Body: '6,f\n' }));
    await s3.send(
      new PutObjectCommand({
        Bucket: 'sapi-files',
        Key: `${key}manifest`,
        Body: JSON.stringify({ entries: [{ url: `s3://sapi-files/${key}0` }, { url: `s3://sapi-files/${key}1` }] }),
      }),
    );
    s3.destroy();
    const res = await env.api('POST', '/tables/in.c-csv.fromslices/import-async', { json: { dataFileId: prep.id, columns: ['k', 'v'], incremental: true } });
    expect((await waitForJob(env.api, res.body.id)).status).toBe('success');
    expect((await env.emulator.readTable('in.c-csv.fromslices')).rows.slice(-2)).toEqual([
      ['5', 'e'],
      ['6', 'f'],
    ]);
  });

  test('a prepared file that was never uploaded fails the job clearly', async () => {
    const prep = (await env.api('POST', '/files/prepare', { json: { name: 'never.csv' } })).body;
    const res = await env.api('POST', `/tables/${T}/import-async`, { json: { dataFileId: prep.id } });
    const job = await waitForJob(env.api, res.body.id);
    expect(job.status).toBe('error');
    expect(job.error.message).toMatch(/missing in object storage/);
  });
});
