import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import * as http from 'node:http';
import { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { forEachBounded } from '../../../src/object-storage/concurrency';
import { downloadFile, headerLine } from '../../../src/object-storage/download';
import { assertCredentialsFresh, createS3Client, credentialsRemainingMs, mapS3Error, parseS3Uri } from '../../../src/object-storage/s3-client';
import { openSource } from '../../../src/object-storage/sources';
import { redactUrl } from '../../../src/http';
import { s3Error } from './fake-s3';

const creds = (msFromNow: number) => ({
  AccessKeyId: 'a',
  SecretAccessKey: 's',
  SessionToken: 't',
  Expiration: new Date(Date.now() + msFromNow).toISOString(),
});

async function readAll(s: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of s) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

describe('credentials', () => {
  it('counts the time left and refuses credentials inside the margin', () => {
    expect(credentialsRemainingMs(creds(60_000))).toBeGreaterThan(58_000);
    expect(() => assertCredentialsFresh(creds(10 * 60_000), 'upload [key=k]')).not.toThrow();
    expect(() => assertCredentialsFresh(creds(60_000), 'upload [key=k]')).toThrow(
      /upload \[key=k\]: temporary credentials .* are expired or rejected; request the file again/,
    );
    expect(() => assertCredentialsFresh(undefined, 'x')).not.toThrow();
    expect(() => assertCredentialsFresh({ ...creds(0), Expiration: 'garbage' }, 'x')).not.toThrow();
  });

  it('maps S3 errors to the registry', () => {
    expect(mapS3Error(s3Error('ExpiredToken', 400), 'upload', { key: 'k' })).toMatchObject({ code: 'SAPI_CREDENTIALS_EXPIRED', retryable: true });
    expect(mapS3Error(s3Error('AccessDenied', 403), 'download', { key: 'k' })).toMatchObject({ code: 'SAPI_CREDENTIALS_EXPIRED' });
    expect(mapS3Error(s3Error('NoSuchKey', 404), 'download', { key: 'k' })).toMatchObject({
      code: 'SAPI_DOWNLOAD_FAILED',
      retryable: false,
      status: 404,
      message: 'download failed (NoSuchKey 404) [key=k]: NoSuchKey from fake',
    });
    expect(mapS3Error(s3Error('InternalError', 500), 'upload', { part: 3 })).toMatchObject({ code: 'SAPI_UPLOAD_FAILED', retryable: true });
    expect(mapS3Error(s3Error('BadDigest', 400), 'upload', {})).toMatchObject({ code: 'SAPI_CHECKSUM_MISMATCH' });
    expect(mapS3Error(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }), 'upload', {})).toMatchObject({
      code: 'SAPI_UPLOAD_FAILED',
      retryable: true,
    });
  });

  it('parses s3:// URIs', () => {
    expect(parseS3Uri('s3://bucket/a/b.csv')).toEqual({ bucket: 'bucket', key: 'a/b.csv' });
    expect(() => parseS3Uri('s3://bucket')).toThrow(/expected s3:\/\/<bucket>\/<key>/);
  });

  it('uses AWS_ENDPOINT_URL_S3 with path-style addressing', async () => {
    const previous = process.env['AWS_ENDPOINT_URL_S3'];
    process.env['AWS_ENDPOINT_URL_S3'] = 'http://127.0.0.1:9999';
    try {
      const s3 = createS3Client({ credentials: creds(3_600_000) });
      const endpoint = await s3.config.endpoint!();
      expect(`${endpoint.protocol}//${endpoint.hostname}:${endpoint.port}`).toBe('http://127.0.0.1:9999');
      expect(s3.config.forcePathStyle).toBe(true);
      s3.destroy();
    } finally {
      if (previous === undefined) delete process.env['AWS_ENDPOINT_URL_S3'];
      else process.env['AWS_ENDPOINT_URL_S3'] = previous;
    }
  });
});

describe('forEachBounded', () => {
  it('never runs more than the limit and stops starting items after a failure', async () => {
    let running = 0;
    let max = 0;
    const started: number[] = [];
    const err = await forEachBounded([0, 1, 2, 3, 4, 5, 6, 7], 3, async (i) => {
      started.push(i);
      running++;
      max = Math.max(max, running);
      await new Promise((r) => setTimeout(r, 5));
      running--;
      if (i === 1) throw new Error('item 1 failed');
    }).catch((e: unknown) => e);
    expect((err as Error).message).toBe('item 1 failed');
    expect(max).toBe(3);
    expect(started.length).toBeLessThan(8);
  });
});

describe('sources', () => {
  let dir: string;
  beforeAll(() => (dir = mkdtempSync(join(tmpdir(), 'sapi-src-'))));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('opens a local file at an offset', async () => {
    const p = join(dir, 'a.bin');
    const data = randomBytes(5000);
    writeFileSync(p, data);
    const src = await openSource(p);
    expect(src.size).toBe(5000);
    expect((await readAll(await src.open(1234))).equals(data.subarray(1234))).toBe(true);
    expect((await readAll(await (await openSource(`file://${p}`)).open(0))).equals(data)).toBe(true);
  });

  it('explains a missing local file and an unsupported scheme', async () => {
    await expect(openSource(join(dir, 'missing.csv'))).rejects.toMatchObject({
      code: 'SAPI_INVALID_INPUT',
      message: expect.stringContaining("must exist on the worker's host"),
    });
    await expect(openSource('ftp://host/x?token=secret')).rejects.toMatchObject({ code: 'SAPI_INVALID_INPUT', message: expect.not.stringContaining('secret') });
  });

  it('hides signatures of URLs in messages', () => {
    expect(redactUrl('https://u:p@b.s3.amazonaws.com/k.csv?X-Amz-Signature=abc&partNumber=2')).toBe(
      'https://b.s3.amazonaws.com/k.csv?X-Amz-Signature=***&partNumber=2',
    );
  });

  describe('HTTP', () => {
    const data = randomBytes(100_000);
    let server: http.Server;
    let base: string;
    let honourRange = true;
    const seenRanges: (string | undefined)[] = [];

    beforeAll(async () => {
      server = http.createServer((req, res) => {
        if (req.url?.startsWith('/missing')) {
          res.writeHead(404, { 'content-type': 'text/plain' });
          return res.end('no such thing');
        }
        if (req.method === 'GET') seenRanges.push(req.headers.range);
        const m = /bytes=(\d+)-/.exec(req.headers.range ?? '');
        if (m && honourRange) {
          const start = Number(m[1]);
          res.writeHead(206, { 'content-length': data.length - start, 'content-range': `bytes ${start}-${data.length - 1}/${data.length}` });
          return res.end(req.method === 'HEAD' ? undefined : data.subarray(start));
        }
        res.writeHead(200, { 'content-length': data.length });
        res.end(req.method === 'HEAD' ? undefined : data);
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(() => {
      server.closeAllConnections();
      server.close();
    });

    it('knows the size from HEAD and resumes with a Range request', async () => {
      honourRange = true;
      const src = await openSource(`${base}/data.bin`);
      expect(src.size).toBe(data.length);
      expect((await readAll(await src.open(40_000))).equals(data.subarray(40_000))).toBe(true);
      expect(seenRanges.at(-1)).toBe('bytes=40000-');
    });

    it('skips bytes itself when the server ignores Range', async () => {
      honourRange = false;
      const src = await openSource(`${base}/data.bin`);
      expect((await readAll(await src.open(777))).equals(data.subarray(777))).toBe(true);
      honourRange = true;
    });

    it('reports a 404 source as a non-retryable failure', async () => {
      const src = await openSource(`${base}/missing.csv`);
      await expect(src.open(0)).rejects.toMatchObject({ code: 'SAPI_DOWNLOAD_FAILED', retryable: false, status: 404 });
    });
  });
});

describe('downloadFile from a presigned URL (unsliced)', () => {
  const data = randomBytes(300_000);
  let server: http.Server;
  let base: string;
  let cutFirstResponse = true;
  const ranges: (string | undefined)[] = [];
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sapi-dl-'));
    server = http.createServer((req, res) => {
      if (req.url?.startsWith('/expired')) {
        res.writeHead(403, { 'content-type': 'application/xml' });
        return res.end('<Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>');
      }
      ranges.push(req.headers.range);
      const m = /bytes=(\d+)-/.exec(req.headers.range ?? '');
      const start = m ? Number(m[1]) : 0;
      res.writeHead(m ? 206 : 200, {
        'content-length': data.length - start,
        ...(m ? { 'content-range': `bytes ${start}-${data.length - 1}/${data.length}` } : {}),
      });
      if (cutFirstResponse) {
        cutFirstResponse = false;
        res.write(data.subarray(0, 100_000), () => setTimeout(() => res.socket?.destroy(), 20));
        return;
      }
      res.end(data.subarray(start));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('continues an interrupted download with a Range request', async () => {
    const dest = join(dir, 'file.csv');
    const file = { id: 1, isSliced: false, url: `${base}/file.csv?X-Amz-Signature=s` };
    await expect(downloadFile({ file, destination: dest })).rejects.toMatchObject({ code: 'SAPI_DOWNLOAD_FAILED', retryable: true });
    expect(existsSync(dest)).toBe(false);
    const result = await downloadFile({ file, destination: dest });
    expect(ranges.at(-1)).toBe('bytes=100000-');
    expect(readFileSync(dest).equals(data)).toBe(true);
    expect(result).toMatchObject({ bytes: data.length, sha256: createHash('sha256').update(data).digest('hex'), sliced: false, slicesDownloaded: 1 });
  });

  it('does not resume leftovers of another file', async () => {
    const dest = join(dir, 'other.csv');
    const first = { id: 1, isSliced: false, url: `${base}/file.csv` };
    await downloadFile({ file: first, destination: dest, keepWorkDir: true });
    writeFileSync(join(`${dest}.parts`, '0.partial'), 'stale bytes from file 1');
    const result = await downloadFile({ file: { id: 2, isSliced: false, url: `${base}/file.csv` }, destination: dest });
    expect(ranges.at(-1)).toBeUndefined();
    expect(result.bytes).toBe(data.length);
  });

  it('turns an expired presigned URL into SAPI_CREDENTIALS_EXPIRED', async () => {
    await expect(downloadFile({ file: { id: 3, isSliced: false, url: `${base}/expired.csv?sig=1` }, destination: join(dir, 'x.csv') })).rejects.toMatchObject({
      code: 'SAPI_CREDENTIALS_EXPIRED',
      message: expect.not.stringContaining('sig=1'),
    });
  });

  it('refuses a sliced file without credentials and explains how to get them', async () => {
    await expect(downloadFile({ file: { id: 4, isSliced: true, url: `${base}/manifest` }, destination: join(dir, 'y.csv') })).rejects.toMatchObject({
      code: 'SAPI_INVALID_INPUT',
      message: expect.stringContaining('federationToken=1'),
    });
  });

  it('builds an RFC 4180 header line', () => {
    expect(headerLine(['id', 'na"me'])).toBe('"id","na""me"\n');
  });
});
