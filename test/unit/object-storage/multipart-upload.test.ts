import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import {
  chunkParts,
  crc32Base64,
  MIN_PART_SIZE_BYTES,
  resolvePartSize,
  uploadMultipart,
  type MultipartUploadState,
} from '../../../src/object-storage/multipart-upload';
import { dropIdlePartBuffers, idlePartBufferBytes, PartBufferPool } from '../../../src/object-storage/part-pipeline';
import { bufferSource, type ByteSource } from '../../../src/object-storage/sources';
import { uploadSliced } from '../../../src/object-storage/sliced-upload';
import { FakeS3, s3Error } from './fake-s3';

const MiB = 1024 * 1024;
const freshCredentials = { AccessKeyId: 'a', SecretAccessKey: 's', SessionToken: 't', Expiration: new Date(Date.now() + 3_600_000).toISOString() };
const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

/** A source that counts how many bytes were read from it. */
function countingSource(data: Buffer): ByteSource & { bytesRead: number; opens: number[] } {
  const src = {
    description: 'counting',
    size: data.length,
    bytesRead: 0,
    opens: [] as number[],
    async open(start: number) {
      src.opens.push(start);
      const chunks: Buffer[] = [];
      for (let off = start; off < data.length; off += 256 * 1024) chunks.push(data.subarray(off, Math.min(off + 256 * 1024, data.length)));
      return Readable.from(
        (async function* () {
          for (const c of chunks) {
            src.bytesRead += c.length;
            yield c;
          }
        })(),
      );
    },
  };
  return src;
}

describe('chunkParts', () => {
  async function sizes(input: Buffer[], partSize: number): Promise<number[]> {
    const out: number[] = [];
    for await (const p of chunkParts(Readable.from(input), partSize)) out.push(p.length);
    return out;
  }

  it('cuts a stream into exact parts with a short last one', async () => {
    expect(await sizes([Buffer.alloc(7), Buffer.alloc(7), Buffer.alloc(7)], 5)).toEqual([5, 5, 5, 5, 1]);
    expect(await sizes([Buffer.alloc(10)], 5)).toEqual([5, 5]);
  });

  it('yields one empty part for an empty stream', async () => {
    expect(await sizes([], 5)).toEqual([0]);
  });

  it('keeps the bytes in order', async () => {
    const data = randomBytes(1000);
    const parts: Buffer[] = [];
    for await (const p of chunkParts(Readable.from([data.subarray(0, 333), data.subarray(333)]), 100)) parts.push(p);
    expect(Buffer.concat(parts).equals(data)).toBe(true);
  });
});

describe('resolvePartSize', () => {
  it('defaults to 8 MiB and refuses parts under 5 MiB', () => {
    expect(resolvePartSize(undefined, undefined)).toBe(8 * MiB);
    expect(() => resolvePartSize(MiB, undefined)).toThrow(/between 5242880/);
  });

  it('grows the part size so that a large file fits in 10 000 parts', () => {
    const size = 200 * 1024 * MiB; // 200 GiB
    const part = resolvePartSize(16 * MiB, size);
    expect(part).toBeGreaterThan(16 * MiB);
    expect(Math.ceil(size / part)).toBeLessThanOrEqual(10_000);
  });
});

describe('uploadMultipart (fake S3)', () => {
  const base = { credentials: freshCredentials, bucket: 'b', key: 'k' };

  it('uploads parts with Content-MD5, at most `concurrency` at a time, and completes them in order', async () => {
    const s3 = new FakeS3();
    s3.partDelayMs = 5;
    const data = randomBytes(5 * MIN_PART_SIZE_BYTES + 3);
    const states: MultipartUploadState[] = [];
    const result = await uploadMultipart({
      ...base,
      s3: s3.asClient(),
      source: bufferSource(data),
      partSizeBytes: MIN_PART_SIZE_BYTES,
      concurrency: 2,
      onProgress: (s) => states.push(s),
    });
    expect(result).toMatchObject({
      multipart: true,
      parts: 6,
      partsUploaded: 6,
      bytes: data.length,
      sourceBytes: data.length,
      sha256: sha(data),
      etag: '"complete-etag-2"',
    });
    expect(s3.maxInFlight).toBeLessThanOrEqual(2);
    expect(s3.objects.get('b/k')!.equals(data)).toBe(true);
    const complete = s3.sent.find((c) => c.name === 'CompleteMultipartUploadCommand')!;
    expect((complete.input['MultipartUpload'] as { Parts: { PartNumber: number }[] }).Parts.map((p) => p.PartNumber)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(states[0]!.parts).toEqual([]); // reported right after creation: the upload id is heartbeated early
    expect(states.at(-1)!.parts).toHaveLength(6);
    expect(states.at(-1)!.bytesSent).toBe(data.length);
  });

  it('reuses part buffers: 20 parts go up through at most concurrency + 1 buffers, and the object is intact', async () => {
    const s3 = new FakeS3();
    s3.partDelayMs = 2;
    const data = randomBytes(20 * MIN_PART_SIZE_BYTES - 7);
    const result = await uploadMultipart({ ...base, s3: s3.asClient(), source: bufferSource(data), partSizeBytes: MIN_PART_SIZE_BYTES, concurrency: 3 });
    expect(result).toMatchObject({ parts: 20, partsUploaded: 20, sha256: sha(data) });
    expect(result.partBuffers).toBeLessThanOrEqual(4);
    expect(s3.objects.get('b/k')!.equals(data)).toBe(true);
  });

  it('hands its part buffers to the next upload: a second upload allocates none, and both objects are intact', async () => {
    dropIdlePartBuffers();
    const s3 = new FakeS3();
    const first = randomBytes(6 * MIN_PART_SIZE_BYTES);
    const second = randomBytes(6 * MIN_PART_SIZE_BYTES + 5);
    s3.partDelayMs = 5;
    const a = await uploadMultipart({ ...base, key: 'a', s3: s3.asClient(), source: bufferSource(first), partSizeBytes: MIN_PART_SIZE_BYTES, concurrency: 2 });
    expect(a.partBuffers).toBe(3);
    expect(idlePartBufferBytes()).toBe(3 * MIN_PART_SIZE_BYTES);
    const b = await uploadMultipart({ ...base, key: 'b', s3: s3.asClient(), source: bufferSource(second), partSizeBytes: MIN_PART_SIZE_BYTES, concurrency: 2 });
    expect(b.partBuffers).toBe(0);
    expect(s3.objects.get('b/a')!.equals(first)).toBe(true);
    expect(s3.objects.get('b/b')!.equals(second)).toBe(true);
    expect(dropIdlePartBuffers()).toBe(3 * MIN_PART_SIZE_BYTES);
    const c = await uploadMultipart({ ...base, key: 'c', s3: s3.asClient(), source: bufferSource(first), partSizeBytes: MIN_PART_SIZE_BYTES, concurrency: 2 });
    expect(c.partBuffers).toBe(3);
    dropIdlePartBuffers();
  });

  it('passes on only the buffers an upload released: a part whose send failed may still be held by its request', () => {
    dropIdlePartBuffers();
    const pool = new PartBufferPool(MIN_PART_SIZE_BYTES);
    const [sent, failed, reading] = [pool.acquire(), pool.acquire(), pool.acquire()];
    pool.release(sent);
    pool.retire();
    expect(idlePartBufferBytes()).toBe(MIN_PART_SIZE_BYTES);
    const next = new PartBufferPool(MIN_PART_SIZE_BYTES);
    const reused = next.acquire();
    expect(reused).toBe(sent);
    expect([failed, reading]).not.toContain(reused);
    expect(next.allocated).toBe(0);
    expect(next.acquire()).not.toBe(sent);
    expect(next.allocated).toBe(1);
    dropIdlePartBuffers();
  });

  it('never calls ListParts, AbortMultipartUpload or HeadObject (the service credentials cannot)', async () => {
    const s3 = new FakeS3();
    await uploadMultipart({ ...base, s3: s3.asClient(), source: bufferSource(randomBytes(2 * MIN_PART_SIZE_BYTES)), partSizeBytes: MIN_PART_SIZE_BYTES });
    expect(new Set(s3.sent.map((c) => c.name))).toEqual(new Set(['CreateMultipartUploadCommand', 'UploadPartCommand', 'CompleteMultipartUploadCommand']));
  });

  it('resumes: skips finished parts but still hashes them', async () => {
    const s3 = new FakeS3();
    const data = randomBytes(4 * MIN_PART_SIZE_BYTES);
    let saved: MultipartUploadState | undefined;
    // First attempt: the third UploadPart fails (after the SDK's own retries).
    let calls = 0;
    const send = s3.send.bind(s3);
    s3.send = async (cmd) => {
      if (cmd.constructor.name === 'UploadPartCommand' && ++calls === 3) throw s3Error('InternalError', 500);
      return send(cmd);
    };
    const err = await uploadMultipart({
      ...base,
      s3: s3.asClient(),
      source: bufferSource(data),
      partSizeBytes: MIN_PART_SIZE_BYTES,
      concurrency: 1,
      onProgress: (s) => (saved = s),
    }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'SAPI_UPLOAD_FAILED', retryable: true, message: expect.stringContaining('part=3') });
    expect(saved!.parts.map((p) => p.PartNumber)).toEqual([1, 2]);

    // Second attempt against the same store: parts 1-2 are read (for the sha256) but not sent.
    const src = countingSource(data);
    const result = await uploadMultipart({ ...base, s3: s3.asClient(), source: src, partSizeBytes: MIN_PART_SIZE_BYTES, resume: saved });
    expect(result).toMatchObject({ partsUploaded: 2, parts: 4, resumed: true, sha256: sha(data) });
    expect(calls).toBe(5);
    expect(src.opens).toEqual([0]);
    expect(s3.objects.get('b/k')!.equals(data)).toBe(true);
  });

  it('with sha256: false, a resume starts reading after the finished prefix', async () => {
    const s3 = new FakeS3();
    const data = randomBytes(3 * MIN_PART_SIZE_BYTES + 10);
    const create = await s3.send({ constructor: { name: 'CreateMultipartUploadCommand' }, input: { Bucket: 'b', Key: 'k' } });
    const uploadId = create['UploadId'] as string;
    const parts = [];
    for (const n of [1, 2]) {
      const body = data.subarray((n - 1) * MIN_PART_SIZE_BYTES, n * MIN_PART_SIZE_BYTES);
      const out = await s3.send({
        constructor: { name: 'UploadPartCommand' },
        input: { UploadId: uploadId, PartNumber: n, Body: body, ContentMD5: createHash('md5').update(body).digest('base64') },
      });
      parts.push({ PartNumber: n, ETag: out['ETag'] as string, size: body.length });
    }
    const src = countingSource(data);
    const result = await uploadMultipart({
      ...base,
      s3: s3.asClient(),
      source: src,
      partSizeBytes: MIN_PART_SIZE_BYTES,
      sha256: false,
      resume: { uploadId, parts, partSizeBytes: MIN_PART_SIZE_BYTES },
    });
    expect(src.opens).toEqual([2 * MIN_PART_SIZE_BYTES]);
    expect(src.bytesRead).toBe(MIN_PART_SIZE_BYTES + 10);
    expect(result).toMatchObject({ partsUploaded: 2, parts: 4, sha256: undefined });
    expect(s3.objects.get('b/k')!.equals(data)).toBe(true);
  });

  it('restarts when the resumed upload no longer exists', async () => {
    const s3 = new FakeS3();
    const data = randomBytes(2 * MIN_PART_SIZE_BYTES);
    const result = await uploadMultipart({
      ...base,
      s3: s3.asClient(),
      source: bufferSource(data),
      partSizeBytes: MIN_PART_SIZE_BYTES,
      resume: { uploadId: 'gone', parts: [{ PartNumber: 1, ETag: '"x"', size: MIN_PART_SIZE_BYTES }] },
    });
    expect(result).toMatchObject({ restarted: true, partsUploaded: 2 });
    expect(s3.objects.get('b/k')!.equals(data)).toBe(true);
  });

  it('sends a CRC32 per part by default and repeats it at completion', async () => {
    const s3 = new FakeS3();
    const data = randomBytes(2 * MIN_PART_SIZE_BYTES + 1);
    await uploadMultipart({ ...base, s3: s3.asClient(), source: bufferSource(data), partSizeBytes: MIN_PART_SIZE_BYTES });
    expect(s3.sent.find((c) => c.name === 'CreateMultipartUploadCommand')!.input['ChecksumAlgorithm']).toBe('CRC32');
    const part1 = s3.sent.find((c) => c.name === 'UploadPartCommand')!.input;
    expect(part1['ChecksumCRC32']).toBe(crc32Base64(data.subarray(0, MIN_PART_SIZE_BYTES)));
    expect(part1['ContentMD5']).toBeUndefined();
    const complete = s3.sent.find((c) => c.name === 'CompleteMultipartUploadCommand')!.input;
    expect((complete['MultipartUpload'] as { Parts: { ChecksumCRC32?: string }[] }).Parts.every((p) => p.ChecksumCRC32)).toBe(true);
    expect(s3.objects.get('b/k')!.equals(data)).toBe(true);
  });

  it('detects a stored part whose CRC32 differs from what was sent', async () => {
    const s3 = new FakeS3();
    s3.crcFor = (n, crc) => (n === 2 ? 'AAAAAA==' : crc);
    await expect(
      uploadMultipart({ ...base, s3: s3.asClient(), source: bufferSource(randomBytes(2 * MIN_PART_SIZE_BYTES)), partSizeBytes: MIN_PART_SIZE_BYTES }),
    ).rejects.toMatchObject({ code: 'SAPI_CHECKSUM_MISMATCH', message: expect.stringContaining('part=2') });
  });

  it('with MD5 checksums, detects a stored part whose ETag is not the MD5 of what was sent', async () => {
    const s3 = new FakeS3();
    s3.etagFor = (n, hex) => (n === 2 ? '0'.repeat(32) : hex);
    await expect(
      uploadMultipart({
        ...base,
        s3: s3.asClient(),
        source: bufferSource(randomBytes(2 * MIN_PART_SIZE_BYTES)),
        partSizeBytes: MIN_PART_SIZE_BYTES,
        checksum: 'MD5',
      }),
    ).rejects.toMatchObject({ code: 'SAPI_CHECKSUM_MISMATCH', message: expect.stringContaining('part=2') });
    expect(s3.sent.find((c) => c.name === 'UploadPartCommand')!.input['ContentMD5']).toBeDefined();
  });

  it('re-sends a finished part whose source bytes changed since the first attempt', async () => {
    const s3 = new FakeS3();
    const data = randomBytes(3 * MIN_PART_SIZE_BYTES);
    let saved: MultipartUploadState | undefined;
    const send = s3.send.bind(s3);
    s3.send = async (cmd) => {
      if (cmd.constructor.name === 'CompleteMultipartUploadCommand' && !saved?.parts.some((p) => p.size === 0)) throw s3Error('InternalError', 500);
      return send(cmd);
    };
    await uploadMultipart({ ...base, s3: s3.asClient(), source: bufferSource(data), partSizeBytes: MIN_PART_SIZE_BYTES, onProgress: (s) => (saved = s) }).catch(
      () => undefined,
    );
    expect(saved!.parts).toHaveLength(3);
    s3.send = send;
    const changed = Buffer.from(data);
    changed[MIN_PART_SIZE_BYTES + 10] ^= 0xff; // part 2 differs now
    const before = s3.count('UploadPartCommand');
    const result = await uploadMultipart({ ...base, s3: s3.asClient(), source: bufferSource(changed), partSizeBytes: MIN_PART_SIZE_BYTES, resume: saved });
    expect(s3.count('UploadPartCommand') - before).toBe(1);
    expect(result.partsUploaded).toBe(1);
    expect(s3.objects.get('b/k')!.equals(changed)).toBe(true);
  });

  it('maps ExpiredToken from the store to a retryable SAPI_CREDENTIALS_EXPIRED', async () => {
    const s3 = new FakeS3();
    s3.fail('CreateMultipartUploadCommand', s3Error('ExpiredToken', 400));
    await expect(
      uploadMultipart({ ...base, s3: s3.asClient(), source: bufferSource(randomBytes(2 * MIN_PART_SIZE_BYTES)), partSizeBytes: MIN_PART_SIZE_BYTES }),
    ).rejects.toMatchObject({ code: 'SAPI_CREDENTIALS_EXPIRED', retryable: true, serviceCode: 'ExpiredToken' });
  });

  it('stops before a part when the credentials are about to expire', async () => {
    const s3 = new FakeS3();
    const credentials = { ...freshCredentials, Expiration: new Date(Date.now() + 60_000).toISOString() };
    await expect(uploadMultipart({ ...base, credentials, s3: s3.asClient(), source: bufferSource(Buffer.from('x')) })).rejects.toMatchObject({
      code: 'SAPI_CREDENTIALS_EXPIRED',
    });
    expect(s3.sent).toHaveLength(0);
  });

  it('puts a small or empty source with one PutObject', async () => {
    const s3 = new FakeS3();
    await uploadMultipart({ ...base, s3: s3.asClient(), source: bufferSource(Buffer.from('id\n1\n')) });
    await uploadMultipart({ ...base, key: 'empty', s3: s3.asClient(), source: bufferSource(Buffer.alloc(0)) });
    expect(s3.sent.map((c) => c.name)).toEqual(['PutObjectCommand', 'PutObjectCommand']);
    expect(s3.objects.get('b/empty')!.length).toBe(0);
  });

  it('detects a source that changed size since it was measured', async () => {
    const s3 = new FakeS3();
    const data = randomBytes(2 * MIN_PART_SIZE_BYTES);
    const src: ByteSource = { description: 'shrinking', size: data.length + 100, open: async () => Readable.from([data]) };
    await expect(uploadMultipart({ ...base, s3: s3.asClient(), source: src, partSizeBytes: MIN_PART_SIZE_BYTES })).rejects.toMatchObject({
      code: 'SAPI_CHECKSUM_MISMATCH',
    });
  });

  it('passes the abort reason through', async () => {
    const s3 = new FakeS3();
    const controller = new AbortController();
    controller.abort(new Error('cancelled by workflow'));
    await expect(uploadMultipart({ ...base, s3: s3.asClient(), source: bufferSource(Buffer.from('x')), signal: controller.signal })).rejects.toThrow(
      'cancelled by workflow',
    );
  });
});

describe('uploadSliced (fake S3)', () => {
  it('names slices part_00000… and writes the manifest last', async () => {
    const s3 = new FakeS3();
    const result = await uploadSliced({
      credentials: freshCredentials,
      s3: s3.asClient(),
      bucket: 'b',
      keyPrefix: 'p/x.csv',
      slices: [bufferSource(Buffer.from('1\n')), bufferSource(Buffer.from('2\n'))],
    });
    expect(s3.sent.at(-1)!.input['Key']).toBe('p/x.csvmanifest');
    expect(result.manifest.entries.map((e) => e.url)).toEqual(['s3://b/p/x.csvpart_00000', 's3://b/p/x.csvpart_00001']);
    expect(JSON.parse(s3.objects.get('b/p/x.csvmanifest')!.toString())).toEqual(result.manifest);
  });

  it('resumes a slice from its finished parts', async () => {
    const s3 = new FakeS3();
    const big = randomBytes(2 * MIN_PART_SIZE_BYTES);
    let state: Parameters<NonNullable<Parameters<typeof uploadSliced>[0]['onProgress']>>[0] | undefined;
    let partCalls = 0;
    const orig = s3.send.bind(s3);
    s3.send = async (cmd) => {
      if (cmd.constructor.name === 'UploadPartCommand' && ++partCalls === 2) throw s3Error('SlowDown', 503);
      return orig(cmd);
    };
    const opts = {
      credentials: freshCredentials,
      s3: s3.asClient(),
      bucket: 'b',
      keyPrefix: 'p/',
      partSizeBytes: MIN_PART_SIZE_BYTES,
      slices: [bufferSource(big)],
    };
    await expect(uploadSliced({ ...opts, onProgress: (s) => (state = s) })).rejects.toMatchObject({ code: 'SAPI_UPLOAD_FAILED' });
    expect(state!.inProgress[0]!.upload.parts).toHaveLength(1);
    const result = await uploadSliced({ ...opts, resume: state });
    expect(partCalls).toBe(3); // 1 ok + 1 failed, then only part 2 again
    expect(result.slices[0]!.sha256).toBe(sha(big));
    expect(s3.objects.get('b/p/part_00000')!.equals(big)).toBe(true);
  });
});
