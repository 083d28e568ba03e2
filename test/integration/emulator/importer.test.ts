import { createHash } from 'node:crypto';
import { FormData } from 'undici';
import { readObject, useEmulator } from './support';

describe('importer service', () => {
  const env = useEmulator();

  test('a 40 MiB upload is streamed to object storage intact', async () => {
    const chunk = Buffer.alloc(1024 * 1024);
    for (let i = 0; i < chunk.length; i++) chunk[i] = 97 + (i % 26);
    const content = Buffer.concat(Array.from({ length: 40 }, () => chunk));
    const form = new FormData();
    form.append('data', new Blob([content]), 'big.csv');
    const res = await env.api('POST', '/upload-file', { multipart: form, base: 'import' });
    expect(res.status).toBe(200);
    expect(res.body.sizeBytes).toBe(content.length);
    const detail = (await env.api('GET', `/files/${res.body.id}?federationToken=1`)).body;
    const stored = await readObject(env.s3, detail.s3Path.bucket, detail.s3Path.key);
    expect(createHash('sha256').update(stored).digest('hex')).toBe(createHash('sha256').update(content).digest('hex'));
  });
});
