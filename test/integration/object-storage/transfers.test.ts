import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import * as http from 'node:http';
import { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync, gunzipSync } from 'node:zlib';
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { SapiError } from '../../../src/errors';
import { downloadFile, type DownloadState } from '../../../src/object-storage/download';
import { uploadMultipart, type MultipartUploadState } from '../../../src/object-storage/multipart-upload';
import { createS3Client, type TemporaryCredentials } from '../../../src/object-storage/s3-client';
import { uploadSliced } from '../../../src/object-storage/sliced-upload';
import { startCountingProxy, type CountingProxy } from '../../harness/counting-proxy';
import { createBucket, startTestMinio, temporaryCredentials, type TestMinio } from './minio-helper';

const MiB = 1024 * 1024;
const UPLOAD_ACTIONS = ['s3:PutObject'];
const DOWNLOAD_ACTIONS = ['s3:GetObject'];

let minio: TestMinio;
let bucket: string;
let dir: string;
const clients: S3Client[] = [];

beforeAll(async () => {
  minio = await startTestMinio();
  bucket = await createBucket(minio, 'os-transfers');
  dir = mkdtempSync(join(tmpdir(), 'sapi-os-'));
});

afterAll(async () => {
  for (const c of clients) c.destroy();
  rmSync(dir, { recursive: true, force: true });
  await minio?.stop();
});

/** An S3 client on the temporary credentials that counts the commands it sends and the most in flight at once. */
function countingClient(credentials: TemporaryCredentials): { s3: S3Client; counts: Record<string, number>; maxInFlight: Record<string, number> } {
  const s3 = createS3Client({ credentials, endpoint: minio.endpoint, region: minio.region });
  clients.push(s3);
  const counts: Record<string, number> = {};
  const inFlight: Record<string, number> = {};
  const maxInFlight: Record<string, number> = {};
  s3.middlewareStack.add(
    (next, context) => async (args) => {
      const name = context.commandName as string;
      counts[name] = (counts[name] ?? 0) + 1;
      inFlight[name] = (inFlight[name] ?? 0) + 1;
      maxInFlight[name] = Math.max(maxInFlight[name] ?? 0, inFlight[name]);
      try {
        return await next(args);
      } finally {
        inFlight[name] = (inFlight[name] ?? 1) - 1;
      }
    },
    { step: 'initialize', name: 'countCommands' },
  );
  return { s3, counts, maxInFlight };
}

function writeRandomFile(path: string, bytes: number): string {
  const data = randomBytes(bytes);
  writeFileSync(path, data);
  return createHash('sha256').update(data).digest('hex');
}

async function getObject(key: string, b = bucket): Promise<Buffer> {
  const out = await minio.admin.send(new GetObjectCommand({ Bucket: b, Key: key }));
  return Buffer.from(await out.Body!.transformToByteArray());
}

const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

describe('multipart upload to MinIO with service-like temporary credentials', () => {
  it('resumes after an abort and sends only the parts that were not finished', async () => {
    const file = join(dir, 'big.bin');
    const expectedSha = writeRandomFile(file, 40 * MiB + 12345); // 9 parts of 5 MiB, the last one short
    const key = 'uploads/big.bin';
    const credentials = await temporaryCredentials(minio, bucket, key, UPLOAD_ACTIONS);

    const controller = new AbortController();
    let saved: MultipartUploadState | undefined;
    const first = countingClient(credentials);
    const err = await uploadMultipart({
      s3: first.s3,
      credentials,
      bucket,
      key,
      source: file,
      partSizeBytes: 5 * MiB,
      concurrency: 2,
      signal: controller.signal,
      onProgress: (state) => {
        saved = state;
        if (state.parts.length >= 3) controller.abort(new Error('test stops the upload'));
      },
    }).catch((e: unknown) => e);
    expect((err as Error).message).toBe('test stops the upload');
    expect(saved!.parts.length).toBeGreaterThanOrEqual(3);
    expect(saved!.parts.length).toBeLessThan(9);
    expect(saved!.bytesSent).toBe(saved!.parts.length * 5 * MiB);
    expect(JSON.parse(JSON.stringify(saved))).toEqual(saved); // heartbeat-safe
    const finishedBefore = saved!.parts.length;

    const second = countingClient(credentials);
    const result = await uploadMultipart({
      s3: second.s3,
      credentials,
      bucket,
      key,
      source: file,
      partSizeBytes: 5 * MiB,
      concurrency: 3,
      resume: { uploadId: saved!.uploadId, parts: saved!.parts, partSizeBytes: saved!.partSizeBytes },
    });
    expect(second.counts['UploadPartCommand']).toBe(9 - finishedBefore);
    expect(second.counts['CreateMultipartUploadCommand']).toBeUndefined();
    expect(second.counts['CompleteMultipartUploadCommand']).toBe(1);
    expect(second.counts['ListPartsCommand']).toBeUndefined();
    expect(second.counts['AbortMultipartUploadCommand']).toBeUndefined();
    expect(result).toMatchObject({
      multipart: true,
      parts: 9,
      partsUploaded: 9 - finishedBefore,
      resumed: true,
      restarted: false,
      bytes: 40 * MiB + 12345,
      sha256: expectedSha,
    });
    expect(sha256(await getObject(key))).toBe(expectedSha);
  });

  it('keeps memory bounded by reading parts as they are sent (no more than concurrency in flight)', async () => {
    const file = join(dir, 'mid.bin');
    const expectedSha = writeRandomFile(file, 26 * MiB);
    const key = 'uploads/mid.bin';
    const credentials = await temporaryCredentials(minio, bucket, key, UPLOAD_ACTIONS);
    const c = countingClient(credentials);
    const result = await uploadMultipart({ s3: c.s3, credentials, bucket, key, source: file, partSizeBytes: 5 * MiB, concurrency: 2 });
    expect(c.maxInFlight['UploadPartCommand']).toBeLessThanOrEqual(2);
    expect(c.counts['UploadPartCommand']).toBe(6);
    expect(result.sha256).toBe(expectedSha);
    expect(sha256(await getObject(key))).toBe(expectedSha);
  });

  it('uploads a file smaller than one part with a single PutObject', async () => {
    const key = 'uploads/small.csv';
    const credentials = await temporaryCredentials(minio, bucket, key, UPLOAD_ACTIONS);
    const file = join(dir, 'small.csv');
    writeFileSync(file, 'id,name\n1,a\n');
    const c = countingClient(credentials);
    const result = await uploadMultipart({ s3: c.s3, credentials, bucket, key, source: file });
    expect(result).toMatchObject({ multipart: false, parts: 1, bytes: 12 });
    expect(c.counts).toEqual({ PutObjectCommand: 1 });
    expect((await getObject(key)).toString()).toBe('id,name\n1,a\n');
  });

  it('compresses on the fly with gzip and a resume restarts the upload', async () => {
    const key = 'uploads/rows.csv.gz';
    const credentials = await temporaryCredentials(minio, bucket, key, UPLOAD_ACTIONS);
    const csv = Buffer.from(Array.from({ length: 200_000 }, (_, i) => `${i},name-${i},${i % 7}\n`).join(''));
    const file = join(dir, 'rows.csv');
    writeFileSync(file, csv);
    const result = await uploadMultipart({
      credentials,
      endpoint: minio.endpoint,
      region: minio.region,
      bucket,
      key,
      source: file,
      gzip: true,
      resume: { uploadId: 'stale', parts: [] },
    });
    expect(result.restarted).toBe(true);
    expect(result.sha256).toBe(sha256(csv));
    expect(result.bytes).toBeLessThan(csv.length);
    expect(gunzipSync(await getObject(key)).equals(csv)).toBe(true);
  });

  it('streams an HTTP source and resumes it with a Range request', async () => {
    const data = randomBytes(12 * MiB);
    let rangeRequests = 0;
    const server = http.createServer((req, res) => {
      const range = /bytes=(\d+)-/.exec(req.headers.range ?? '');
      if (range) {
        rangeRequests++;
        const start = Number(range[1]);
        res.writeHead(206, {
          'content-length': data.length - start,
          'content-range': `bytes ${start}-${data.length - 1}/${data.length}`,
          'accept-ranges': 'bytes',
        });
        return res.end(req.method === 'HEAD' ? undefined : data.subarray(start));
      }
      res.writeHead(200, { 'content-length': data.length, 'accept-ranges': 'bytes' });
      res.end(req.method === 'HEAD' ? undefined : data);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/data.bin?signature=secret`;
      const key = 'uploads/from-http.bin';
      const credentials = await temporaryCredentials(minio, bucket, key, UPLOAD_ACTIONS);
      const controller = new AbortController();
      let saved: MultipartUploadState | undefined;
      await uploadMultipart({
        credentials,
        endpoint: minio.endpoint,
        region: minio.region,
        bucket,
        key,
        source: url,
        partSizeBytes: 5 * MiB,
        concurrency: 1,
        signal: controller.signal,
        onProgress: (s) => {
          saved = s;
          if (s.parts.length === 1) controller.abort(new Error('stop'));
        },
      }).catch(() => undefined);
      expect(saved?.parts.map((p) => p.PartNumber)).toEqual([1]);
      const c = countingClient(credentials);
      const result = await uploadMultipart({ s3: c.s3, credentials, bucket, key, source: url, partSizeBytes: 5 * MiB, resume: saved, sha256: false });
      expect(rangeRequests).toBe(1); // started at byte 5 MiB
      expect(c.counts['UploadPartCommand']).toBe(2);
      expect(result.sha256).toBeUndefined();
      expect(sha256(await getObject(key))).toBe(sha256(data));
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('refuses credentials that are about to expire before sending anything', async () => {
    const credentials = { ...(await temporaryCredentials(minio, bucket, 'x', UPLOAD_ACTIONS)), Expiration: new Date(Date.now() + 60_000).toISOString() };
    const err = await uploadMultipart({ credentials, endpoint: minio.endpoint, bucket, key: 'x', source: join(dir, 'small.csv') }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SapiError);
    expect(err).toMatchObject({ code: 'SAPI_CREDENTIALS_EXPIRED', retryable: true });
  });

  it('reports rejected credentials as SAPI_CREDENTIALS_EXPIRED', async () => {
    const credentials = await temporaryCredentials(minio, bucket, 'only/this/key', UPLOAD_ACTIONS);
    const err = await uploadMultipart({
      credentials,
      endpoint: minio.endpoint,
      region: minio.region,
      bucket,
      key: 'another/key',
      source: join(dir, 'small.csv'),
    }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'SAPI_CREDENTIALS_EXPIRED', serviceCode: 'AccessDenied' });
    expect((err as Error).message).toContain('key=another/key');
  });
});

describe('sliced upload', () => {
  it('uploads slices under the prefix and writes the manifest in slice order', async () => {
    const prefix = 'sliced/up-1/';
    const credentials = await temporaryCredentials(minio, bucket, prefix, UPLOAD_ACTIONS);
    const slices = [0, 1, 2].map((i) => {
      const p = join(dir, `slice-${i}.csv`);
      writeFileSync(p, `${i},a\n${i},b\n`);
      return p;
    });
    const states: number[] = [];
    const result = await uploadSliced({
      credentials,
      endpoint: minio.endpoint,
      region: minio.region,
      bucket,
      keyPrefix: prefix,
      slices,
      onProgress: (s) => states.push(s.finished.length),
    });
    expect(result.manifestKey).toBe('sliced/up-1/manifest');
    const manifest = JSON.parse((await getObject('sliced/up-1/manifest')).toString());
    expect(manifest).toEqual({
      entries: [0, 1, 2].map((i) => ({ url: `s3://${bucket}/sliced/up-1/part_0000${i}`, mandatory: true })),
    });
    expect((await getObject('sliced/up-1/part_00002')).toString()).toBe('2,a\n2,b\n');
    expect(states.at(-1)).toBe(3);

    // A retry with every slice finished only rewrites the manifest.
    const c = countingClient(credentials);
    const again = await uploadSliced({
      s3: c.s3,
      credentials,
      bucket,
      keyPrefix: prefix,
      slices,
      resume: { finished: result.slices, inProgress: [], slices: 3 },
    });
    expect(again.slicesUploaded).toBe(0);
    expect(c.counts).toEqual({ PutObjectCommand: 1 });
  });
});

describe('sliced download', () => {
  const prefix = 'exports/t1/';
  let expected: Buffer;
  let readCredentials: TemporaryCredentials;
  const sliceCount = 12;

  beforeAll(async () => {
    // Slices of different sizes so they finish out of order; manifest order is what counts.
    const parts: Buffer[] = [];
    const entries: { url: string }[] = [];
    for (let i = 0; i < sliceCount; i++) {
      const rows = Array.from({ length: 2000 + ((i * 7919) % 5) * 20_000 }, (_, r) => `"${i}","${r}","${'x'.repeat(r % 50)}"\n`).join('');
      const body = Buffer.from(rows);
      parts.push(body);
      const key = `${prefix}slice_${String(i).padStart(2, '0')}`;
      await minio.admin.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
      entries.push({ url: `s3://${bucket}/${key}` });
    }
    await minio.admin.send(new PutObjectCommand({ Bucket: bucket, Key: `${prefix}manifest`, Body: JSON.stringify({ entries }) }));
    expected = Buffer.concat(parts);
    readCredentials = await temporaryCredentials(minio, bucket, prefix, DOWNLOAD_ACTIONS);
  });

  const fileDetail = (): { id: number; isSliced: boolean; region: string; s3Path: { bucket: string; key: string }; credentials: TemporaryCredentials } => ({
    id: 501,
    isSliced: true,
    region: minio.region,
    s3Path: { bucket, key: prefix },
    credentials: readCredentials,
  });

  // the requests are counted where the store sees them: the slices' GETs are sent by the download thread
  let store: CountingProxy;
  beforeEach(async () => {
    store = await startCountingProxy(minio.endpoint);
  });
  afterEach(() => store.close());

  it('downloads slices in parallel, each at its offset in the destination, with a header', async () => {
    const dest = join(dir, 'out', 'export.csv');
    const result = await downloadFile({
      file: fileDetail(),
      endpoint: store.endpoint,
      destination: dest,
      concurrency: 4,
      headerColumns: ['slice', 'row', 'pad'],
    });
    const got = readFileSync(dest);
    const header = Buffer.from('"slice","row","pad"\n');
    expect(got.equals(Buffer.concat([header, expected]))).toBe(true);
    expect(result).toMatchObject({ path: dest, bytes: got.length, sha256: sha256(got), slices: sliceCount, sliced: true, slicesDownloaded: sliceCount });
    expect(store.counts).toEqual({ 'GET manifest': 1, GET: sliceCount }); // the answers' sizes give the offsets: no HEADs
    expect(store.maxInFlight['GET']).toBeGreaterThan(1);
    expect(store.maxInFlight['GET']).toBeLessThanOrEqual(4);
    expect(existsSync(`${dest}.parts`)).toBe(false);
  });

  it('resumes after an abort and fetches only the slices that were not finished', async () => {
    const dest = join(dir, 'out', 'resumed.csv');
    const controller = new AbortController();
    let saved: DownloadState | undefined;
    // the slices from the 8th on are held until the abort: the download cannot end before it, however fast it is
    const gate = await startCountingProxy(minio.endpoint);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    gate.hold = (kind, path) => (kind === 'GET' && /slice_(0[7-9]|1\d)$/.test(path) ? released : undefined);
    const err = await downloadFile({
      file: fileDetail(),
      endpoint: gate.endpoint,
      destination: dest,
      concurrency: 2,
      signal: controller.signal,
      onProgress: (s) => {
        saved = s;
        if (s.finishedSlices.length >= 5) {
          controller.abort(new Error('test stops the download'));
          release();
        }
      },
    })
      .catch((e: unknown) => e)
      .finally(() => {
        release();
        return gate.close();
      });
    expect((err as Error).message).toBe('test stops the download');
    expect(existsSync(dest)).toBe(false);
    const finished = saved!.finishedSlices.length;
    expect(finished).toBeGreaterThanOrEqual(5);
    const sizes = saved!.inPlace!.sizes;
    for (const index of saved!.finishedSlices) expect(sizes.slice(0, index + 1)).not.toContain(null); // the offsets of the finished ones
    const ends = saved!.finishedSlices.map((index) => (sizes.slice(0, index + 1) as number[]).reduce((a, b) => a + b, 0));
    expect(statSync(`${dest}.partial`).size).toBeGreaterThanOrEqual(Math.max(...ends)); // written in place, no work folder
    expect(existsSync(`${dest}.parts`)).toBe(false);

    const result = await downloadFile({ file: fileDetail(), endpoint: store.endpoint, destination: dest, concurrency: 4, resume: saved });
    expect(result.slicesDownloaded).toBe(sliceCount - finished);
    expect(store.counts).toEqual({ 'GET manifest': 1, GET: sliceCount - finished }); // only the unfinished slices
    expect(readFileSync(dest).equals(expected)).toBe(true);
    expect(result.sha256).toBe(sha256(expected));
  });

  it('refuses, without a retry, a slice whose size is not the one an earlier attempt saw (the stored file changed)', async () => {
    const dest = join(dir, 'out', 'changed.csv');
    const controller = new AbortController();
    let saved: DownloadState | undefined;
    // slices from the 3rd on are held until the abort (the download cannot run past it)
    const gate = await startCountingProxy(minio.endpoint);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    gate.hold = (kind, path) => (kind === 'GET' && /slice_(0[2-9]|1\d)$/.test(path) ? released : undefined);
    await downloadFile({
      file: fileDetail(),
      endpoint: gate.endpoint,
      destination: dest,
      concurrency: 1,
      signal: controller.signal,
      onProgress: (s) => {
        saved = s;
        if (s.finishedSlices.length >= 2) {
          controller.abort(new Error('test stops the download'));
          release();
        }
      },
    })
      .catch(() => undefined)
      .finally(() => {
        release();
        return gate.close();
      });
    expect(saved!.finishedSlices).toEqual([0, 1]);
    const sizes = [...saved!.inPlace!.sizes];
    sizes[5] = 1; // as if slice 5 had 1 byte when the earlier attempt asked
    const err = await downloadFile({
      file: fileDetail(),
      endpoint: store.endpoint,
      destination: dest,
      concurrency: 4,
      resume: { ...saved!, inPlace: { ...saved!.inPlace!, sizes } },
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SapiError);
    expect((err as SapiError).toJSON()).toMatchObject({ code: 'SAPI_DOWNLOAD_FAILED', retryable: false });
    expect((err as SapiError).message).toMatch(/^slice has \d+ bytes where an earlier attempt saw 1: the stored file changed \[object=s3:\/\/.*slice_05\]$/);
    expect(existsSync(dest)).toBe(false);
  });

  it('starts over when the state of a previous attempt belongs to another file or its partial file is gone', async () => {
    const dest = join(dir, 'out', 'restarted.csv');
    const other = {
      slices: sliceCount,
      finishedSlices: [0, 1, 2],
      bytesDownloaded: 3,
      inPlace: { source: 'another file', sizes: Array<number>(sliceCount).fill(1) },
    };
    mkdirSync(join(dir, 'out'), { recursive: true });
    writeFileSync(`${dest}.partial`, Buffer.alloc(expected.length, 'x'));
    const result = await downloadFile({ file: fileDetail(), endpoint: store.endpoint, destination: dest, concurrency: 4, resume: other });
    expect(result.slicesDownloaded).toBe(sliceCount);
    expect(store.counts['GET']).toBe(sliceCount);
    expect(readFileSync(dest).equals(expected)).toBe(true);
    expect(result.sha256).toBe(sha256(expected));
  });

  it.each([
    { status: 403, code: 'AccessDenied', expected: { code: 'SAPI_CREDENTIALS_EXPIRED', retryable: true } },
    { status: 404, code: 'NoSuchKey', expected: { code: 'SAPI_DOWNLOAD_FAILED', retryable: false, serviceCode: 'NoSuchKey', status: 404 } },
    { status: 503, code: 'SlowDown', expected: { code: 'SAPI_DOWNLOAD_FAILED', retryable: true, serviceCode: 'SlowDown', status: 503 } },
  ])('maps a slice GET the store answers $status $code, keeping the finished slices for a retry', async ({ status, code, expected: wanted }) => {
    const dest = join(dir, 'out', `refused-${status}.csv`);
    let gets = 0;
    store.intercept = (kind) =>
      kind === 'GET' && ++gets === 3 ? { status, body: `<?xml version="1.0"?><Error><Code>${code}</Code><Message>refused</Message></Error>` } : undefined;
    let saved: DownloadState | undefined;
    const err = await downloadFile({ file: fileDetail(), endpoint: store.endpoint, destination: dest, concurrency: 1, onProgress: (st) => (saved = st) }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(SapiError);
    expect((err as SapiError).toJSON()).toMatchObject(wanted);
    expect(existsSync(dest)).toBe(false);
    expect(saved?.finishedSlices).toEqual([0, 1]); // one slice at a time: the third GET was refused

    store.intercept = undefined;
    const result = await downloadFile({ file: fileDetail(), endpoint: store.endpoint, destination: dest, concurrency: 4, resume: saved });
    expect(result.slicesDownloaded).toBe(sliceCount - 2);
    expect(readFileSync(dest).equals(expected)).toBe(true);
    expect(result.sha256).toBe(sha256(expected));
  });

  it('fails a slice whose answer does not say its size (no Content-Length), keeping the finished slices', async () => {
    const dest = join(dir, 'out', 'unsized.csv');
    let gets = 0;
    store.intercept = (kind) => (kind === 'GET' && ++gets === 3 ? { status: 200, body: 'chunked, no length' } : undefined);
    let saved: DownloadState | undefined;
    const err = await downloadFile({ file: fileDetail(), endpoint: store.endpoint, destination: dest, concurrency: 1, onProgress: (st) => (saved = st) }).catch(
      (e: unknown) => e,
    );
    expect((err as SapiError).toJSON()).toMatchObject({ code: 'SAPI_DOWNLOAD_FAILED', retryable: true });
    expect((err as SapiError).message).toMatch(
      /^the store did not say the size of the slice \(no Content-Length in its answer\) \[object=s3:\/\/.*slice_02\]$/,
    );
    expect(saved?.finishedSlices).toEqual([0, 1]);
    expect(existsSync(dest)).toBe(false);
  });

  it('decompresses gzipped slices before concatenating them', async () => {
    const gzPrefix = 'exports/gz/';
    const bodies = ['a,1\n', 'b,2\n', 'c,3\n'];
    const entries = [];
    for (const [i, body] of bodies.entries()) {
      const key = `${gzPrefix}part_${i}.gz`;
      await minio.admin.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: gzipSync(body) }));
      entries.push({ url: `s3://${bucket}/${key}` });
    }
    await minio.admin.send(new PutObjectCommand({ Bucket: bucket, Key: `${gzPrefix}manifest`, Body: JSON.stringify({ entries }) }));
    const credentials = await temporaryCredentials(minio, bucket, gzPrefix, DOWNLOAD_ACTIONS);
    const dest = join(dir, 'out', 'gz.csv');
    const file = { id: 7, isSliced: true, s3Path: { bucket, key: gzPrefix }, credentials };
    await downloadFile({ file, endpoint: minio.endpoint, destination: dest, headerColumns: ['k', 'v'] });
    expect(readFileSync(dest, 'utf8')).toBe('"k","v"\na,1\nb,2\nc,3\n');
    const keep = join(dir, 'out', 'kept.csv.gz');
    await downloadFile({ file, endpoint: minio.endpoint, destination: keep, headerColumns: ['k', 'v'], gunzip: false });
    expect(gunzipSync(readFileSync(keep)).toString()).toBe('"k","v"\na,1\nb,2\nc,3\n'); // multi-member gzip
  });

  it('downloads an unsliced file to a local path and to an s3:// destination', async () => {
    const key = 'exports/single.csv';
    const body = randomBytes(3 * MiB + 17);
    await minio.admin.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
    const credentials = await temporaryCredentials(minio, bucket, key, DOWNLOAD_ACTIONS);
    const file = { id: 8, isSliced: false, s3Path: { bucket, key }, credentials };
    const dest = join(dir, 'out', 'single.csv');
    const local = await downloadFile({ file, endpoint: minio.endpoint, destination: dest });
    expect(local).toMatchObject({ sliced: false, slices: 1, bytes: body.length, sha256: sha256(body) });
    expect(readFileSync(dest).equals(body)).toBe(true);

    const destBucket = await createBucket(minio, 'os-dest');
    const toS3 = await downloadFile({
      file: fileDetail(),
      endpoint: minio.endpoint,
      destination: `s3://${destBucket}/copies/export.csv`,
      destinationS3: minio.admin,
      headerColumns: ['slice', 'row', 'pad'],
    });
    const copied = await getObject('copies/export.csv', destBucket);
    expect(copied.equals(Buffer.concat([Buffer.from('"slice","row","pad"\n'), expected]))).toBe(true);
    expect(toS3.sha256).toBe(sha256(copied));
  });

  it('refuses expired read credentials', async () => {
    const file = { ...fileDetail(), credentials: { ...readCredentials, Expiration: new Date(Date.now() - 1000).toISOString() } };
    await expect(downloadFile({ file, endpoint: minio.endpoint, destination: join(dir, 'out', 'never.csv') })).rejects.toMatchObject({
      code: 'SAPI_CREDENTIALS_EXPIRED',
    });
  });
});
