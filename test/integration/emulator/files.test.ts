import { HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { FormData, request } from 'undici';
import { readObject, s3With, useEmulator } from './support';

describe('files', () => {
  const env = useEmulator();

  test('prepare answers 201 with the full file resource and upload parameters', async () => {
    const res = await env.api('POST', '/files/prepare', { json: { name: 'data.csv', sizeBytes: 12, tags: ['a', 'b'], isEncrypted: true, federationToken: 1 } });
    expect(res.status).toBe(201);
    const f = res.body;
    expect(f).toMatchObject({
      name: 'data.csv',
      isPublic: false,
      isSliced: false,
      isEncrypted: true,
      sizeBytes: 12,
      tags: ['a', 'b'],
      maxAgeDays: 15,
      runId: null,
      runIds: [],
      creatorToken: { id: 101, description: 'test token' },
      provider: 'aws',
      region: env.minio.region,
    });
    expect(f.created).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d{4}$/);
    expect(f.url).toMatch(/X-Amz-Signature=/);
    expect(f.uploadParams).toMatchObject({ bucket: 'sapi-files', acl: 'private', 'x-amz-server-side-encryption': 'AES256' });
    expect(f.uploadParams.key).toMatch(new RegExp(`^exp-15/1/files/\\d{4}/\\d\\d/\\d\\d/${f.id}\\.data\\.csv$`));
    expect(Object.keys(f.uploadParams.credentials).sort()).toEqual(['AccessKeyId', 'Expiration', 'SecretAccessKey', 'SessionToken']);
    const hours = (Date.parse(f.uploadParams.credentials.Expiration) - Date.now()) / 3.6e6;
    expect(hours).toBeGreaterThan(11);
  });

  test('prepare accepts form-encoded tags[] and tags[0] and loose booleans', async () => {
    const a = await env.api('POST', '/files/prepare', { form: 'name=x.csv&tags[]=one&tags[]=two&isPermanent=1&isSliced=true' });
    expect(a.status).toBe(201);
    expect(a.body).toMatchObject({ tags: ['one', 'two'], isSliced: true, maxAgeDays: null });
    expect(a.body.uploadParams.key).not.toMatch(/^exp-/);
    const b = await env.api('POST', '/files/prepare', { form: 'name=y.csv&tags[0]=z&tags[1]=w&isSliced=0&isPublic=false' });
    expect(b.body).toMatchObject({ tags: ['z', 'w'], isSliced: false, isPublic: false });
  });

  test('prepare accepts a multipart body', async () => {
    const form = new FormData();
    form.append('name', 'multi.csv');
    form.append('tags[]', 'm');
    form.append('isEncrypted', '1');
    const res = await env.api('POST', '/files/prepare', { multipart: form });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ name: 'multi.csv', tags: ['m'], isEncrypted: true });
  });

  test('prepare refuses a name too long for an object name with 400 and takes the longest that fits', async () => {
    // a 1.1 MB name used to reach STS as a session policy over MinIO's 2 KiB and answered 500 (fuzz seed 1294026281)
    const huge = await env.api('POST', '/files/prepare', { json: { name: 'v'.repeat(1_100_000), federationToken: 1 } });
    expect(huge.status).toBe(400);
    expect(huge.body.code).toBe('storage.validation');
    expect(huge.body.error).toMatch(/^name is too long: 1100000 characters; .* use at most (\d+) characters$/);
    const allowed = Number(/use at most (\d+) characters/.exec(huge.body.error)![1]);
    const longest = await env.api('POST', '/files/prepare', { json: { name: 'w'.repeat(allowed), federationToken: 1 } });
    expect([longest.status, longest.body.error]).toEqual([201, undefined]);
    const { key, bucket, credentials } = longest.body.uploadParams;
    expect(key.split('/').pop()).toHaveLength(255);
    await s3With(env.minio, credentials).send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: 'a\n1\n' }));
    const oneMore = await env.api('POST', '/files/prepare', { json: { name: 'w'.repeat(allowed + 1) } });
    expect(oneMore.status).toBe(400);
  });

  test('prepare rejects a missing name and a non-boolean flag with 400 storage.validation', async () => {
    const noName = await env.api('POST', '/files/prepare', { json: { sizeBytes: 1 } });
    expect(noName.status).toBe(400);
    expect(noName.body.code).toBe('storage.validation');
    const badBool = await env.api('POST', '/files/prepare', { json: { name: 'a.csv', isSliced: 'maybe' } });
    expect(badBool.status).toBe(400);
    expect(badBool.body.error).toMatch(/isSliced/);
    const badSize = await env.api('POST', '/files/prepare', { json: { name: 'a.csv', sizeBytes: -3 } });
    expect(badSize.status).toBe(400);
  });

  test('a file uploaded with the upload credentials reports its real size and downloads with read credentials', async () => {
    const prep = (await env.api('POST', '/files/prepare', { json: { name: 'real.csv', federationToken: 1 } })).body;
    const s3 = s3With(env.minio, prep.uploadParams.credentials);
    await s3.send(new PutObjectCommand({ Bucket: prep.uploadParams.bucket, Key: prep.uploadParams.key, Body: 'a,b\n1,2\n' }));
    s3.destroy();
    const detail = await env.api('GET', `/files/${prep.id}?federationToken=1`);
    expect(detail.body.sizeBytes).toBe(8);
    expect(detail.body.s3Path).toEqual({ bucket: 'sapi-files', key: prep.uploadParams.key });
    const reader = s3With(env.minio, detail.body.credentials);
    expect((await readObject(reader, detail.body.s3Path.bucket, detail.body.s3Path.key)).toString()).toBe('a,b\n1,2\n');
    reader.destroy();
    expect(await fetch(detail.body.url).then((r) => r.text())).toBe('a,b\n1,2\n');
    const plain = await env.api('GET', `/files/${prep.id}`);
    expect(plain.body.credentials).toBeUndefined();
    expect(plain.body.uploadParams).toBeUndefined();
  });

  test('files are listed newest first, filtered by tags, paged by limit and offset', async () => {
    for (const name of ['t1.csv', 't2.csv', 't3.csv']) await env.api('POST', '/files/prepare', { json: { name, tags: ['listing', name] } });
    const tagged = await env.api('GET', '/files?tags[]=listing');
    expect(tagged.body.map((f: { name: string }) => f.name)).toEqual(['t3.csv', 't2.csv', 't1.csv']);
    const both = await env.api('GET', '/files?tags[0]=listing&tags[1]=t2.csv');
    expect(both.body.map((f: { name: string }) => f.name)).toEqual(['t2.csv']);
    const page = await env.api('GET', '/files?tags[]=listing&limit=1&offset=1');
    expect(page.body.map((f: { name: string }) => f.name)).toEqual(['t2.csv']);
  });

  test('deleting a file removes its record and its object', async () => {
    const prep = (await env.api('POST', '/files/prepare', { json: { name: 'gone.csv' } })).body;
    const s3 = s3With(env.minio, prep.uploadParams.credentials);
    await s3.send(new PutObjectCommand({ Bucket: 'sapi-files', Key: prep.uploadParams.key, Body: 'x' }));
    s3.destroy();
    expect((await env.api('DELETE', `/files/${prep.id}`)).status).toBe(204);
    expect((await env.api('GET', `/files/${prep.id}`)).status).toBe(404);
    await expect(env.s3.send(new HeadObjectCommand({ Bucket: 'sapi-files', Key: prep.uploadParams.key }))).rejects.toThrow();
  });

  test('unknown file ids answer 404 storage.files.notFound', async () => {
    for (const path of ['/files/999999', '/files/abc']) {
      const res = await env.api('GET', path);
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('storage.files.notFound');
    }
    expect((await env.api('DELETE', '/files/999999')).status).toBe(404);
  });

  test('files record the X-KBC-RunId of the request that created them, and the list filters by runId', async () => {
    const prepared = await env.api('POST', '/files/prepare', { json: { name: 'run.csv' }, headers: { 'X-KBC-RunId': 'run-7' } });
    expect(prepared.body.runId).toBe('run-7');
    const form = new FormData();
    form.append('data', new Blob(['a\n1\n']), 'run.csv');
    const uploaded = await env.api('POST', '/upload-file', { multipart: form, base: 'import', headers: { 'X-KBC-RunId': 'run-7' } });
    expect(uploaded.body.runId).toBe('run-7');
    expect((await env.api('GET', `/files/${prepared.body.id}`)).body.runId).toBe('run-7');
    const listed = (await env.api('GET', '/files?runId=run-7')).body.map((f: { id: number }) => f.id);
    expect(listed.sort()).toEqual([prepared.body.id, uploaded.body.id].sort());
  });

  describe('tags (issue 39)', () => {
    test('POST files/{id}/tags {tag} answers 204 and adds the tag once; DELETE files/{id}/tags/{tag} answers 204 and removes it; the list filters by the new tags', async () => {
      const file = (await env.api('POST', '/files/prepare', { json: { name: 'tagged.csv', tags: ['first'] } })).body;
      const added = await env.api('POST', `/files/${file.id}/tags`, { json: { tag: 'exported' } });
      expect(added.status).toBe(204);
      expect(added.body).toBeUndefined();
      // form-encoded like the PHP client's older versions; a tag the file has already stays once
      expect((await env.api('POST', `/files/${file.id}/tags`, { form: { tag: 'exported' } })).status).toBe(204);
      expect((await env.api('POST', `/branch/default/files/${file.id}/tags`, { json: { tag: 'second' } })).status).toBe(204);
      expect((await env.api('GET', `/files/${file.id}`)).body.tags).toEqual(['first', 'exported', 'second']);
      expect((await env.api('GET', '/files?tags[]=exported&tags[]=second')).body.map((f: { id: number }) => f.id)).toEqual([file.id]);
      const removed = await env.api('DELETE', `/files/${file.id}/tags/first`);
      expect(removed.status).toBe(204);
      expect((await env.api('DELETE', `/files/${file.id}/tags/never-there`)).status).toBe(204);
      expect((await env.api('GET', `/files/${file.id}`)).body.tags).toEqual(['exported', 'second']);
    });

    test("a missing tag is 400; an unknown file 404; another token's file 403 and unchanged", async () => {
      const file = (await env.api('POST', '/files/prepare', { json: { name: 'mine.csv' } })).body;
      const missing = await env.api('POST', `/files/${file.id}/tags`, { json: {} });
      expect(missing.status).toBe(400);
      expect(missing.body).toMatchObject({ code: 'storage.validation', error: `tag is required: the tag to add to file ${file.id}; got null` });
      const unknown = await env.api('POST', '/files/999999/tags', { json: { tag: 'x' } });
      expect(unknown.status).toBe(404);
      expect(unknown.body.code).toBe('storage.files.notFound');
      expect((await env.api('DELETE', '/files/999999/tags/x')).status).toBe(404);
      const limited = (await env.api('POST', '/tokens', { json: { description: 'no file reads' } })).body.token;
      const other = await env.api('POST', `/files/${file.id}/tags`, { json: { tag: 'x' }, token: limited });
      expect(other.status).toBe(403);
      expect(other.body.code).toBe('accessDenied');
      expect((await env.api('DELETE', `/files/${file.id}/tags/x`, { token: limited })).status).toBe(403);
      expect((await env.api('GET', `/files/${file.id}`)).body.tags).toEqual([]);
    });
  });

  // on a real store: prepare hands out credentials of the object-storage server (the memory store refuses it)
  describe('prepare on branch paths and credential faults', () => {
    afterEach(() => env.emulator.faults.clear());

    test('branch-scoped paths reach the same files, buckets and tables', async () => {
      const created = await env.api('POST', '/branch/default/buckets', { json: { name: 'branched' } });
      expect(created.status).toBe(201);
      expect((await env.api('GET', '/buckets/in.c-branched')).status).toBe(200);
      expect((await env.api('GET', '/branch/1/buckets/in.c-branched')).status).toBe(200);
      const prepared = await env.api('POST', '/branch/default/files/prepare', { json: { name: 'b.csv' } });
      expect(prepared.status).toBe(201);
      expect((await env.api('GET', `/branch/default/files/${prepared.body.id}`)).body.id).toBe(prepared.body.id);
    });

    test('expireCredentials makes the next upload credentials claim a short life, through the handle or the admin endpoint', async () => {
      const expiresIn = async () => {
        const res = await env.api('POST', '/files/prepare', { json: { name: 'short.csv' } });
        return Date.parse(res.body.uploadParams.credentials.Expiration) - Date.now();
      };
      env.emulator.faults.expireCredentials({ access: 'upload', expiresInSeconds: 60 });
      expect(await expiresIn()).toBeLessThanOrEqual(60_000);
      expect(await expiresIn()).toBeGreaterThan(10 * 60_000); // one use only: then the STS lifetime again
      const admin = await request(`${env.emulator.url}/_emulator/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ expireCredentials: { expiresInSeconds: 0, times: 1 } }),
      });
      await admin.body.dump();
      expect(admin.statusCode).toBe(201);
      expect(await expiresIn()).toBeLessThanOrEqual(0);
    });
  });
});
