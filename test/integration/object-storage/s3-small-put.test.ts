/**
 * A small upload with the service's temporary credentials (every small import's): one PutObject signed by us and sent
 * through the worker's undici pool, no SDK client. Against MinIO behind a counting proxy: the bytes stored, the
 * requests the store saw, the SDK's retries and the activity's deadline kept, S3's error codes reported.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { Agent } from 'undici';
import { s3Store } from '../../../src/object-storage/s3-store';
import { openSource } from '../../../src/object-storage/sources';
import * as s3Client from '../../../src/object-storage/s3-client';
import { type TemporaryCredentials } from '../../../src/object-storage/s3-client';
import { startCountingProxy, type CountingProxy } from '../../harness/counting-proxy';
import { createBucket, startTestMinio, temporaryCredentials, type TestMinio } from './minio-helper';

let minio: TestMinio;
let proxy: CountingProxy;
let bucket: string;
let dir: string;
const dispatcher = new Agent();

beforeAll(async () => {
  minio = await startTestMinio();
  bucket = await createBucket(minio, 'small-put');
  proxy = await startCountingProxy(minio.endpoint);
  dir = mkdtempSync(join(tmpdir(), 'sapi-small-put-'));
}, 120_000);

afterAll(async () => {
  await proxy?.close();
  await dispatcher.close();
  rmSync(dir, { recursive: true, force: true });
  await minio?.stop();
});

beforeEach(() => {
  for (const k of Object.keys(proxy.counts)) delete proxy.counts[k];
  proxy.intercept = undefined;
});

const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

async function stored(key: string): Promise<Buffer> {
  const out = await minio.admin.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return Buffer.from(await out.Body!.transformToByteArray());
}

function file(name: string, bytes: number): { path: string; data: Buffer } {
  const data = randomBytes(bytes);
  const path = join(dir, name);
  writeFileSync(path, data);
  return { path, data };
}

function store(credentials: TemporaryCredentials, deadline?: () => number | undefined) {
  return s3Store({ bucket, credentials, region: minio.region, endpoint: proxy.endpoint, dispatcher, deadline });
}

const slowDown = { status: 503, body: '<?xml version="1.0"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>' };

describe('a small upload with temporary credentials (one signed PutObject through the pool)', () => {
  it('stores the bytes with one PUT, its sha256 computed, keys encoded as the SDK encodes them, no SDK client per upload', async () => {
    const clientsMade = jest.spyOn(s3Client, 'createS3Client');
    for (const key of ['uploads/small.csv', "uploads/with space/ünïcode !'()*+=&$@.csv"]) {
      for (const k of Object.keys(proxy.counts)) delete proxy.counts[k];
      const credentials = await temporaryCredentials(minio, bucket, 'uploads/', ['s3:PutObject']);
      const { path, data } = file('small.bin', 50_000);
      const s = store(credentials);
      const result = await s.upload({ key, source: await openSource(path) });
      s.close();
      expect(result).toEqual({ parts: 1, partsUploaded: 1, bytes: 50_000, sourceBytes: 50_000, sha256: sha256(data), resumed: false });
      expect(proxy.counts).toEqual({ PUT: 1 });
      expect((await stored(key)).equals(data)).toBe(true);
    }
    // one client for the process, which builds the requests of the endpoint (never sends one): none per upload
    expect(clientsMade).toHaveBeenCalledTimes(1);
    clientsMade.mockRestore();
  });

  it('retries a PUT the store answers with 503 SlowDown, as the SDK client did', async () => {
    const credentials = await temporaryCredentials(minio, bucket, 'retry/', ['s3:PutObject']);
    const { path, data } = file('retry.bin', 1_000);
    let refused = 0;
    proxy.intercept = (kind) => (kind === 'PUT' && refused++ < 2 ? slowDown : undefined);
    await store(credentials).upload({ key: 'retry/a.bin', source: await openSource(path) });
    expect(proxy.counts).toEqual({ PUT: 3 });
    expect((await stored('retry/a.bin')).equals(data)).toBe(true);
  });

  it('gives up after 4 attempts and reports the store code (retryable)', async () => {
    const credentials = await temporaryCredentials(minio, bucket, 'retry/', ['s3:PutObject']);
    const { path } = file('busy.bin', 1_000);
    proxy.intercept = (kind) => (kind === 'PUT' ? slowDown : undefined);
    const err = await store(credentials)
      .upload({ key: 'retry/busy.bin', source: await openSource(path) })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'SAPI_UPLOAD_FAILED', serviceCode: 'SlowDown', status: 503, retryable: true });
    expect(proxy.counts).toEqual({ PUT: 4 });
  });

  it('makes no retry that would not finish before the activity deadline', async () => {
    const credentials = await temporaryCredentials(minio, bucket, 'retry/', ['s3:PutObject']);
    const { path } = file('late.bin', 1_000);
    proxy.intercept = (kind) => (kind === 'PUT' ? slowDown : undefined);
    // 2.5 s left: the 2 s margin leaves less than the 1 s an attempt needs after any wait
    const deadlineMs = Date.now() + 2_500;
    const err = await store(credentials, () => deadlineMs)
      .upload({ key: 'retry/late.bin', source: await openSource(path) })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'SAPI_UPLOAD_FAILED', serviceCode: 'SlowDown', retryable: true });
    expect(proxy.counts).toEqual({ PUT: 1 });
  });

  it('reports credentials the store refuses as SAPI_CREDENTIALS_EXPIRED with its code, without a retry', async () => {
    const credentials = await temporaryCredentials(minio, bucket, 'only/this/', ['s3:PutObject']);
    const { path } = file('denied.bin', 1_000);
    const err = await store(credentials)
      .upload({ key: 'another/key.bin', source: await openSource(path) })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'SAPI_CREDENTIALS_EXPIRED', serviceCode: 'AccessDenied' });
    expect((err as Error).message).toContain('key=another/key.bin');
    expect(proxy.counts).toEqual({ PUT: 1 });
  });

  it('refuses credentials about to expire before sending anything', async () => {
    const credentials = {
      ...(await temporaryCredentials(minio, bucket, 'uploads/', ['s3:PutObject'])),
      Expiration: new Date(Date.now() + 60_000).toISOString(),
    };
    const { path } = file('expiring.bin', 1_000);
    const err = await store(credentials)
      .upload({ key: 'uploads/expiring.bin', source: await openSource(path) })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'SAPI_CREDENTIALS_EXPIRED', retryable: true });
    expect(proxy.counts).toEqual({});
  });

  it('fails a PUT whose stored CRC32 differs from what was sent', async () => {
    const credentials = await temporaryCredentials(minio, bucket, 'uploads/', ['s3:PutObject']);
    const { path } = file('crc.bin', 1_000);
    // a store that stored other bytes: it answers 200 with another checksum
    const fake = await startFakeStore({ etag: '"0123456789abcdef0123456789abcdef"', 'x-amz-checksum-crc32': 'AAAAAA==' });
    try {
      const s = s3Store({ bucket, credentials, region: minio.region, endpoint: fake.endpoint, dispatcher });
      const err = await s.upload({ key: 'uploads/crc.bin', source: await openSource(path) }).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'SAPI_CHECKSUM_MISMATCH' });
      expect(fake.puts).toBe(1);
    } finally {
      await fake.close();
    }
  });
});

describe('a multipart upload with temporary credentials (parts signed here, through the pool)', () => {
  const MiB = 1024 * 1024;

  /** The S3 commands the store's SDK clients send, by name (the clients made while `run` runs). */
  async function sdkCommands<T>(run: () => Promise<T>): Promise<{ result: T; commands: Record<string, number> }> {
    const commands: Record<string, number> = {};
    const make = s3Client.createS3Client;
    const spy = jest.spyOn(s3Client, 'createS3Client').mockImplementation((o) => {
      const client = make(o);
      client.middlewareStack.add(
        (next, context) => (args) => {
          const name = String(context.commandName);
          commands[name] = (commands[name] ?? 0) + 1;
          return next(args);
        },
        { step: 'initialize', name: 'testCountCommands' },
      );
      return client;
    });
    try {
      return { result: await run(), commands };
    } finally {
      spy.mockRestore();
    }
  }

  it('sends every part as a signed PUT through the pool (the SDK client only creates and completes), the object intact', async () => {
    const credentials = await temporaryCredentials(minio, bucket, 'multi/', ['s3:PutObject']);
    const { path, data } = file('multi.bin', 12 * MiB + 777); // 3 parts of 5 MiB, the last one short
    for (const key of ['multi/a.bin', "multi/with space/ünïcode !'()*+=&$@.bin"]) {
      for (const k of Object.keys(proxy.counts)) delete proxy.counts[k];
      const s = store(credentials);
      const source = await openSource(path);
      const { result, commands } = await sdkCommands(() => s.upload({ key, source, partSizeBytes: 5 * MiB, concurrency: 2 }));
      s.close();
      expect(result).toMatchObject({ parts: 3, partsUploaded: 3, bytes: data.length, sourceBytes: data.length, sha256: sha256(data), resumed: false });
      expect(commands).toEqual({ CreateMultipartUploadCommand: 1, CompleteMultipartUploadCommand: 1 });
      expect(proxy.counts).toEqual({ POST: 2, PUT: 3 });
      expect((await stored(key)).equals(data)).toBe(true);
    }
  });

  it('retries a part the store answers with 503 SlowDown, as the SDK client did', async () => {
    const credentials = await temporaryCredentials(minio, bucket, 'multi/', ['s3:PutObject']);
    const { path, data } = file('multi-retry.bin', 11 * MiB);
    let puts = 0;
    proxy.intercept = (kind) => (kind === 'PUT' && ++puts === 2 ? slowDown : undefined);
    const result = await store(credentials).upload({ key: 'multi/retry.bin', source: await openSource(path), partSizeBytes: 5 * MiB, concurrency: 1 });
    expect(result).toMatchObject({ parts: 3, partsUploaded: 3, sha256: sha256(data) });
    expect(proxy.counts).toEqual({ POST: 2, PUT: 4 });
    expect((await stored('multi/retry.bin')).equals(data)).toBe(true);
  });

  it('resumes from the heartbeated parts: a second attempt sends only the parts that were not finished', async () => {
    const credentials = await temporaryCredentials(minio, bucket, 'multi/', ['s3:PutObject']);
    const { path, data } = file('multi-resume.bin', 16 * MiB + 5); // 4 parts
    const controller = new AbortController();
    let saved: unknown;
    let finished = 0;
    const err = await store(credentials)
      .upload({
        key: 'multi/resume.bin',
        source: await openSource(path),
        partSizeBytes: 5 * MiB,
        concurrency: 1,
        signal: controller.signal,
        onProgress: (state, bytesSent) => {
          saved = state;
          finished = bytesSent / (5 * MiB);
          if (finished >= 2) controller.abort(new Error('test stops the upload'));
        },
      })
      .catch((e: unknown) => e);
    expect((err as Error).message).toBe('test stops the upload');
    expect(finished).toBe(2);
    for (const k of Object.keys(proxy.counts)) delete proxy.counts[k];
    const result = await store(credentials).upload({ key: 'multi/resume.bin', source: await openSource(path), partSizeBytes: 5 * MiB, resume: saved });
    expect(result).toMatchObject({ parts: 4, partsUploaded: 2, resumed: true, sha256: sha256(data) });
    expect(proxy.counts).toEqual({ POST: 1, PUT: 2 }); // no CreateMultipartUpload: the complete only
    expect((await stored('multi/resume.bin')).equals(data)).toBe(true);
  });

  it('starts a new upload when the heartbeated one no longer exists (the store answers the signed part NoSuchUpload)', async () => {
    const credentials = await temporaryCredentials(minio, bucket, 'multi/', ['s3:PutObject']);
    const { path, data } = file('multi-gone.bin', 6 * MiB);
    const gone = { bucket, key: 'multi/gone.bin', uploadId: 'no-such-upload', partSizeBytes: 5 * MiB, checksum: 'CRC32', parts: [], bytesSent: 0 };
    const result = await store(credentials).upload({
      key: 'multi/gone.bin',
      source: await openSource(path),
      partSizeBytes: 5 * MiB,
      concurrency: 1,
      resume: gone,
    });
    expect(result).toMatchObject({ parts: 2, partsUploaded: 2, resumed: false, sha256: sha256(data) });
    expect(proxy.counts).toEqual({ POST: 2, PUT: 3 }); // the refused part, then a new upload's two parts
    expect((await stored('multi/gone.bin')).equals(data)).toBe(true);
  });
});

/** An HTTP server that answers every PUT 200 with `headers` (and reads the body), counting them. */
async function startFakeStore(headers: Record<string, string>): Promise<{ endpoint: string; readonly puts: number; close(): Promise<void> }> {
  const http = await import('node:http');
  let puts = 0;
  const server = http.createServer((req, res) => {
    if (req.method === 'PUT') puts++;
    req.resume();
    req.on('end', () => res.writeHead(200, headers).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    endpoint: `http://127.0.0.1:${port}`,
    get puts() {
      return puts;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
