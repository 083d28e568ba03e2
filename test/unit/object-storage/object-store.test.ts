import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { downloadFromStore, type DownloadState } from '../../../src/object-storage/download';
import { uploadSlices, type SlicedUploadState } from '../../../src/object-storage/sliced-upload';
import { bufferSource } from '../../../src/object-storage/sources';
import { memoryStore, type MemoryUploadState } from '../../../src/object-storage/memory-store';

const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');
const KiB = 1024;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sapi-object-store-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('sliced upload over any object store (in-memory adapter)', () => {
  it('stores every slice under part_NNNNN and then a manifest naming them in the store’s scheme, in order', async () => {
    const store = memoryStore('bucket-a');
    const slices = [randomBytes(3 * KiB), randomBytes(10), Buffer.alloc(0)];
    const result = await uploadSlices(store, { keyPrefix: 'f/x.csv', slices: slices.map((s) => bufferSource(s)), partSizeBytes: KiB });
    expect(result.manifest.entries.map((e) => e.url)).toEqual([
      's3://bucket-a/f/x.csvpart_00000',
      's3://bucket-a/f/x.csvpart_00001',
      's3://bucket-a/f/x.csvpart_00002',
    ]);
    expect(JSON.parse(store.objects.get('f/x.csvmanifest')!.toString())).toEqual(result.manifest);
    slices.forEach((s, i) => expect(store.objects.get(`f/x.csvpart_0000${i}`)!.equals(s)).toBe(true));
    expect(result.slices.map((s) => s.sha256)).toEqual(slices.map(sha));
    expect(result).toMatchObject({ bytes: 3 * KiB + 10, slicesUploaded: 3 });
  });

  it('after a failed part, a retry with the heartbeated state sends only what is missing and the manifest once', async () => {
    const store = memoryStore();
    const big = randomBytes(4 * KiB);
    const small = randomBytes(100);
    store.faults.failPart.add('p/part_00000#3');
    let state: SlicedUploadState | undefined;
    const options = {
      keyPrefix: 'p/',
      slices: [bufferSource(big), bufferSource(small)],
      partSizeBytes: KiB,
      concurrency: 1,
      onProgress: (s: SlicedUploadState) => (state = s),
    };
    await expect(uploadSlices(store, options)).rejects.toMatchObject({ code: 'SAPI_UPLOAD_FAILED', message: expect.stringContaining('injected failure') });
    expect(store.objects.has('p/manifest')).toBe(false);
    const upload = state!.inProgress.find((p) => p.index === 0)!.upload as MemoryUploadState;
    expect(upload.parts.map((p) => p.index)).toEqual([1, 2]);

    store.partRequests.length = 0;
    const result = await uploadSlices(store, { ...options, resume: state });
    expect(store.partRequests.filter((r) => r.startsWith('p/part_00000'))).toEqual(['p/part_00000#3', 'p/part_00000#4']);
    expect(store.objects.get('p/part_00000')!.equals(big)).toBe(true);
    expect(result.slices[0]!.sha256).toBe(sha(big)); // the whole source is read again for the hash, not sent again
    expect(store.objects.has('p/manifest')).toBe(true);
  });

  it('after a lost answer (the part was stored, the answer never came), the retry sends that part again and the object is whole', async () => {
    const store = memoryStore();
    const data = randomBytes(3 * KiB + 7);
    store.faults.loseAnswer.add('l/part_00000#2');
    let state: SlicedUploadState | undefined;
    const options = { keyPrefix: 'l/', slices: [bufferSource(data)], partSizeBytes: KiB, concurrency: 1, onProgress: (s: SlicedUploadState) => (state = s) };
    await expect(uploadSlices(store, options)).rejects.toMatchObject({ message: expect.stringContaining('injected lost answer') });
    expect((state!.inProgress[0]!.upload as MemoryUploadState).parts.map((p) => p.index)).toEqual([1]);
    store.partRequests.length = 0;
    await uploadSlices(store, { ...options, resume: state });
    expect(store.partRequests).toEqual(['l/part_00000#2', 'l/part_00000#3', 'l/part_00000#4']);
    expect(store.objects.get('l/part_00000')!.equals(data)).toBe(true);
  });

  it('keeps at most `concurrency` parts in flight across slices, whatever their number and size', async () => {
    const store = memoryStore();
    const slices = Array.from({ length: 6 }, () => bufferSource(randomBytes(8 * KiB)));
    await uploadSlices(store, { keyPrefix: 'c/', slices, partSizeBytes: KiB, concurrency: 3 });
    expect(store.maxInFlight).toBeLessThanOrEqual(3);
    expect(store.maxInFlight).toBeGreaterThan(1);
  });

  it('refuses credentials about to expire before any byte moves', async () => {
    const store = memoryStore('b', new Date(Date.now() + 60_000).toISOString());
    await expect(uploadSlices(store, { keyPrefix: 'e/', slices: [bufferSource(Buffer.from('x'))] })).rejects.toMatchObject({
      code: 'SAPI_CREDENTIALS_EXPIRED',
    });
    expect(store.partRequests).toEqual([]);
  });

  it('the part memory of one upload is bounded by its concurrency, not by the file size', async () => {
    const store = memoryStore();
    const result = await store.upload({ key: 'm', source: bufferSource(randomBytes(64 * KiB)), partSizeBytes: KiB, concurrency: 2 });
    expect(result.parts).toBe(64);
    expect(store.partBuffers).toBeLessThanOrEqual(2 + 1);
    expect(store.objects.get('m')!.length).toBe(64 * KiB);
  });
});

describe('download over any object store (in-memory adapter)', () => {
  async function slicedFile(store: ReturnType<typeof memoryStore>, slices: Buffer[], gz = false): Promise<void> {
    const ext = gz ? '.gz' : '';
    slices.forEach((s, i) => store.objects.set(`exp/part_${i}${ext}`, gz ? gzipSync(s) : s));
    store.objects.set(
      'exp/manifest',
      Buffer.from(JSON.stringify({ entries: slices.map((_, i) => ({ url: `s3://${store.container}/exp/part_${i}${ext}`, mandatory: true })) })),
    );
  }

  it('decompresses .gz slices through the work folder, adds the header, and hashes what it wrote', async () => {
    const store = memoryStore();
    const slices = [Buffer.from('1,a\n'), Buffer.from('2,b\n'), Buffer.from('3,c\n')];
    await slicedFile(store, slices, true);
    const destination = join(dir, 'gz.csv');
    const result = await downloadFromStore(store, 'exp/', { file: { id: 1, isSliced: true }, destination, headerColumns: ['id', 'name'] });
    const expected = Buffer.from('"id","name"\n1,a\n2,b\n3,c\n');
    expect(readFileSync(destination).equals(expected)).toBe(true);
    expect(result).toMatchObject({ bytes: expected.length, sha256: sha(expected), slices: 3, sliced: true, slicesDownloaded: 3 });
    expect(existsSync(`${destination}.parts`)).toBe(false);
  });

  it('after a short read, the retry continues the partial slice from where it stopped (a range read), and the file is whole', async () => {
    const store = memoryStore();
    const slices = [randomBytes(200 * KiB), randomBytes(300 * KiB)];
    await slicedFile(store, slices, false);
    // gunzip: true forces the work folder, where a partial slice is kept and continued
    store.objects.set('exp/part_1', gzipSync(slices[1]!));
    store.objects.set('exp/part_0', gzipSync(slices[0]!));
    const cutAt = 1000;
    store.faults.shortRead.set('exp/part_1', cutAt);
    const destination = join(dir, 'short.csv');
    let state: DownloadState | undefined;
    const options = { file: { id: 2, isSliced: true }, destination, gunzip: true, concurrency: 1, onProgress: (s: DownloadState) => (state = s) };
    await expect(downloadFromStore(store, 'exp/', options)).rejects.toMatchObject({
      code: 'SAPI_DOWNLOAD_FAILED',
      message: expect.stringContaining('ended early'),
    });
    expect(state!.finishedSlices).toEqual([0]);
    store.reads.length = 0;
    const result = await downloadFromStore(store, 'exp/', { ...options, resume: state });
    expect(store.reads).toContain(`exp/part_1@${cutAt}`);
    expect(store.reads.some((r) => r.startsWith('exp/part_0@'))).toBe(false);
    const expected = Buffer.concat(slices);
    expect(readFileSync(destination).equals(expected)).toBe(true);
    expect(result).toMatchObject({ sha256: sha(expected), slicesDownloaded: 1 });
  });

  it('writes uncompressed slices in place (no work folder) through the plain GETs the store signs', async () => {
    const store = memoryStore();
    await store.serve();
    try {
      const slices = Array.from({ length: 5 }, (_, i) => randomBytes(10 * KiB + i));
      await slicedFile(store, slices, false);
      const destination = join(dir, 'in-place.csv');
      const result = await downloadFromStore(store, 'exp/', { file: { id: 3, isSliced: true }, destination, headerColumns: ['a'] });
      const expected = Buffer.concat([Buffer.from('"a"\n'), ...slices]);
      expect(readFileSync(destination).equals(expected)).toBe(true);
      expect(result).toMatchObject({ bytes: expected.length, sha256: sha(expected), slices: 5 });
      expect(existsSync(`${destination}.parts`)).toBe(false);
    } finally {
      await store.stop();
    }
  });

  it('downloads an unsliced object as stored, and refuses a manifest entry outside the store', async () => {
    const store = memoryStore();
    const data = randomBytes(50 * KiB);
    store.objects.set('one.csv', data);
    const destination = join(dir, 'one.csv');
    const result = await downloadFromStore(store, 'one.csv', { file: { id: 4, isSliced: false }, destination });
    expect(readFileSync(destination).equals(data)).toBe(true);
    expect(result).toMatchObject({ sha256: sha(data), sliced: false, slices: 1 });

    store.objects.set('bad/manifest', Buffer.from(JSON.stringify({ entries: [{ url: 's3://elsewhere/x', mandatory: true }] })));
    await expect(downloadFromStore(store, 'bad/', { file: { id: 5, isSliced: true }, destination: join(dir, 'bad.csv') })).rejects.toMatchObject({
      code: 'SAPI_DOWNLOAD_FAILED',
      retryable: false,
    });
  });
});
