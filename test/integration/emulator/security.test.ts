import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { s3With, useEmulator } from './support';

/** Temporary credentials are scoped like the real service's: one key (or prefix), one direction. */
describe('temporary credentials', () => {
  const env = useEmulator();

  test('upload credentials of one file cannot write another file or read anything', async () => {
    const a = (await env.api('POST', '/files/prepare', { json: { name: 'a.csv' } })).body;
    const b = (await env.api('POST', '/files/prepare', { json: { name: 'b.csv' } })).body;
    const s3 = s3With(env.minio, a.uploadParams.credentials);
    await s3.send(new PutObjectCommand({ Bucket: 'sapi-files', Key: a.uploadParams.key, Body: 'mine' }));
    await expect(s3.send(new PutObjectCommand({ Bucket: 'sapi-files', Key: b.uploadParams.key, Body: 'theirs' }))).rejects.toMatchObject({
      name: 'AccessDenied',
    });
    await expect(s3.send(new GetObjectCommand({ Bucket: 'sapi-files', Key: a.uploadParams.key }))).rejects.toMatchObject({ name: 'AccessDenied' });
    s3.destroy();
  });

  test('read credentials can read their file but not write it or read another', async () => {
    const a = (await env.api('POST', '/files/prepare', { json: { name: 'r.csv' } })).body;
    const b = (await env.api('POST', '/files/prepare', { json: { name: 'other.csv' } })).body;
    for (const f of [a, b]) {
      const up = s3With(env.minio, f.uploadParams.credentials);
      await up.send(new PutObjectCommand({ Bucket: 'sapi-files', Key: f.uploadParams.key, Body: 'content' }));
      up.destroy();
    }
    const detail = (await env.api('GET', `/files/${a.id}?federationToken=1`)).body;
    const s3 = s3With(env.minio, detail.credentials);
    const got = await s3.send(new GetObjectCommand({ Bucket: 'sapi-files', Key: detail.s3Path.key }));
    expect(await got.Body!.transformToString()).toBe('content');
    await expect(s3.send(new PutObjectCommand({ Bucket: 'sapi-files', Key: detail.s3Path.key, Body: 'overwrite' }))).rejects.toMatchObject({
      name: 'AccessDenied',
    });
    await expect(s3.send(new GetObjectCommand({ Bucket: 'sapi-files', Key: b.uploadParams.key }))).rejects.toMatchObject({ name: 'AccessDenied' });
    s3.destroy();
  });

  test('sliced upload credentials cover every key under the prefix and nothing beside it', async () => {
    const sliced = (await env.api('POST', '/files/prepare', { json: { name: 's.csv', isSliced: true } })).body;
    const other = (await env.api('POST', '/files/prepare', { json: { name: 'x.csv' } })).body;
    const s3 = s3With(env.minio, sliced.uploadParams.credentials);
    await s3.send(new PutObjectCommand({ Bucket: 'sapi-files', Key: `${sliced.uploadParams.key}part_0`, Body: 'a\n' }));
    await s3.send(new PutObjectCommand({ Bucket: 'sapi-files', Key: `${sliced.uploadParams.key}manifest`, Body: '{"entries":[]}' }));
    await expect(s3.send(new PutObjectCommand({ Bucket: 'sapi-files', Key: other.uploadParams.key, Body: 'x' }))).rejects.toMatchObject({
      name: 'AccessDenied',
    });
    s3.destroy();
  });
});
