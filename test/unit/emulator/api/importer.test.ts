import { FormData } from 'undici';
import { useMemoryEmulator } from '../../../harness/emulator-api';

describe('importer service', () => {
  const env = useMemoryEmulator();

  test('upload-file stores the data part and answers the file resource without upload parameters', async () => {
    const form = new FormData();
    form.append('name', 'named.csv');
    form.append('tags[]', 'x');
    form.append('tags[]', 'y');
    form.append('isPermanent', '1');
    form.append('notify', '0');
    form.append('data', new Blob(['a,b\n1,2\n']), 'original.csv');
    const res = await env.api('POST', '/upload-file', { multipart: form, base: 'import' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'named.csv', tags: ['x', 'y'], sizeBytes: 8, isSliced: false, maxAgeDays: null, provider: 'aws' });
    expect(res.body.uploadParams).toBeUndefined();
    expect(res.body.creatorToken.id).toBe(101);
    expect(res.body.creatorToken.description).toMatch(/importer/);
    expect(await fetch(res.body.url).then((r) => r.text())).toBe('a,b\n1,2\n');
  });

  test('a request that is not multipart, or lacks the data part, is rejected in the importer error shape', async () => {
    const notMultipart = await env.api('POST', '/upload-file', { json: { data: 'x' }, base: 'import' });
    expect(notMultipart.status).toBe(400);
    expect(notMultipart.body).toMatchObject({ status: 'error', message: expect.stringContaining('multipart') });
    const form = new FormData();
    form.append('name', 'nothing.csv');
    const noData = await env.api('POST', '/upload-file', { multipart: form, base: 'import' });
    expect(noData.status).toBe(400);
    expect(noData.body).toMatchObject({ status: 'error', message: expect.stringContaining('"data"') });
  });

  test('a multipart body cut off inside the data part is refused with 400, and no file is left behind', async () => {
    const before = (await env.api('GET', '/files?limit=1000')).body.length;
    const boundary = 'cut-off-boundary';
    const body = `--${boundary}\r\nContent-Disposition: form-data; name="data"; filename="cut.csv"\r\nContent-Type: text/csv\r\n\r\na,b\n1,2\n3,4`;
    const res = await env.api('POST', '/upload-file', { base: 'import', headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, raw: body });
    expect({ status: res.status, message: res.body.message }).toEqual({ status: 400, message: expect.stringContaining('the multipart body cannot be read') });
    expect((await env.api('GET', '/files?limit=1000')).body.length).toBe(before);
  });

  test('unknown importer paths answer 404 in the importer error shape', async () => {
    const res = await env.api('GET', '/nope', { base: 'import' });
    expect(res.status).toBe(404);
    expect(res.body.status).toBe('error');
    expect(res.body.message).toBeDefined();
  });
});
