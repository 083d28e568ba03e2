import { createHash } from 'node:crypto';
import { type ContainerClient } from '@azure/storage-blob';
import { absUrl, assertAbsCredentialsFresh, mapAbsError, parseAbsUrl } from '../../../src/object-storage/abs-client';
import { blockId, blockIndexOf, MAX_BLOCKS, resolveBlockSize, uploadBlockBlob } from '../../../src/object-storage/abs-upload';
import { bufferSource } from '../../../src/object-storage/sources';
import { manifestSchema } from '../../../src/storage-api/schemas';
import { AbsObjectStore } from '../../../src/emulator/abs-store';
import { SapiErrorCode, type SapiError } from '../../../src/errors';

const MiB = 1024 * 1024;

/** An in-memory block blob store: what Azure keeps per blob (staged and committed blocks) and every call made. */
function fakeContainer() {
  const staged = new Map<string, Map<string, Buffer>>();
  const committed = new Map<string, Buffer>();
  const calls: string[] = [];
  const clients = new Map<string, unknown>();
  const container = {
    containerName: 'c',
    getBlockBlobClient(name: string) {
      if (!clients.has(name)) clients.set(name, newClient(name));
      return clients.get(name);
    },
  };
  function newClient(name: string) {
    const blocks = staged.get(name) ?? new Map<string, Buffer>();
    staged.set(name, blocks);
    return {
      async stageBlock(id: string, body: Buffer, length: number, options: { transactionalContentMD5?: Uint8Array }) {
        expect(Buffer.from(options.transactionalContentMD5 ?? []).toString('base64')).toBe(createHash('md5').update(body).digest('base64'));
        calls.push(`stage ${blockIndexOf(id)} ${length}`);
        blocks.set(id, Buffer.from(body));
      },
      async getBlockList() {
        calls.push('list');
        if (blocks.size === 0) throw Object.assign(new Error('BlobNotFound'), { statusCode: 404 });
        return { uncommittedBlocks: [...blocks].map(([id, b]) => ({ name: id, size: b.length })), committedBlocks: [] };
      },
      async commitBlockList(ids: string[]) {
        calls.push(`commit ${ids.length}`);
        committed.set(name, Buffer.concat(ids.map((id) => blocks.get(id) as Buffer)));
      },
    };
  }
  return { container: container as unknown as ContainerClient, staged, committed, calls };
}

function data(size: number, seed = 1): Buffer {
  const b = Buffer.allocUnsafe(size);
  for (let i = 0; i < size; i++) b[i] = (i * seed) % 251;
  return b;
}

describe('Azure block blob upload', () => {
  it('stages deterministic, equal-length block ids and commits them in order into the same bytes', async () => {
    const store = fakeContainer();
    const source = data(2 * MiB + 5);
    const result = await uploadBlockBlob({
      container: store.container,
      containerName: 'c',
      blobName: 'b',
      source: bufferSource(source),
      partSizeBytes: MiB,
      concurrency: 2,
    });
    expect(result).toMatchObject({ parts: 3, partsUploaded: 3, bytes: source.length, resumed: false });
    expect(result.partBuffers).toBeLessThanOrEqual(2 + 1); // memory: (concurrency + 1) blocks, whatever the size
    expect(result.sha256).toBe(createHash('sha256').update(source).digest('hex'));
    expect(store.committed.get('b')).toEqual(source);
    expect(new Set([blockId(1), blockId(2), blockId(99999)].map((id) => id.length)).size).toBe(1);
    expect([1, 2, 3].map((i) => blockIndexOf(blockId(i)))).toEqual([1, 2, 3]);
  });

  it('does not send again the blocks the store already holds (staged after the last heartbeat too)', async () => {
    const store = fakeContainer();
    const source = data(3 * MiB);
    const blob = store.container.getBlockBlobClient('b');
    // an earlier attempt staged blocks 1 and 2, then died before heartbeating the second
    for (const i of [1, 2])
      await blob.stageBlock(blockId(i), source.subarray((i - 1) * MiB, i * MiB), MiB, {
        transactionalContentMD5: createHash('md5')
          .update(source.subarray((i - 1) * MiB, i * MiB))
          .digest(),
      });
    store.calls.length = 0;
    const resume = {
      container: 'c',
      blobName: 'b',
      partSizeBytes: MiB,
      blocks: [{ index: 1, size: MiB, md5: createHash('md5').update(source.subarray(0, MiB)).digest('base64') }],
      bytesSent: MiB,
    };
    const result = await uploadBlockBlob({ container: store.container, containerName: 'c', blobName: 'b', source: bufferSource(source), resume });
    expect(store.calls).toEqual(['list', `stage 3 ${MiB}`, 'commit 3']);
    expect(result).toMatchObject({ parts: 3, partsUploaded: 1, resumed: true });
    expect(store.committed.get('b')).toEqual(source);
  });

  it('sends a block again when the source changed since the heartbeat recorded it', async () => {
    const store = fakeContainer();
    const old = data(MiB, 3);
    await store.container.getBlockBlobClient('b').stageBlock(blockId(1), old, MiB, { transactionalContentMD5: createHash('md5').update(old).digest() });
    const resume = {
      container: 'c',
      blobName: 'b',
      partSizeBytes: MiB,
      blocks: [{ index: 1, size: MiB, md5: createHash('md5').update(old).digest('base64') }],
      bytesSent: MiB,
    };
    const source = data(MiB, 7);
    const result = await uploadBlockBlob({ container: store.container, containerName: 'c', blobName: 'b', source: bufferSource(source), resume });
    expect(result.partsUploaded).toBe(1);
    expect(store.committed.get('b')).toEqual(source);
  });

  it('never reuses blocks of a gzip upload (the compressed stream may differ) and does not list them', async () => {
    const store = fakeContainer();
    const source = data(MiB);
    await uploadBlockBlob({ container: store.container, containerName: 'c', blobName: 'b', source: bufferSource(source), gzip: true, partSizeBytes: MiB });
    store.calls.length = 0;
    await uploadBlockBlob({ container: store.container, containerName: 'c', blobName: 'b', source: bufferSource(source), gzip: true, partSizeBytes: MiB });
    expect(store.calls.filter((c) => c.startsWith('stage')).length).toBeGreaterThan(0);
    expect(store.calls).not.toContain('list');
  });

  it('resumes from the heartbeat when the SAS may not list blocks (the container-wide SAS of a sliced file)', async () => {
    const store = fakeContainer();
    const blob = store.container.getBlockBlobClient('b');
    blob.getBlockList = async () => {
      store.calls.push('list');
      throw Object.assign(new Error('AuthorizationPermissionMismatch'), { statusCode: 403 });
    };
    const source = data(2 * MiB);
    const first = source.subarray(0, MiB);
    await blob.stageBlock(blockId(1), first, MiB, { transactionalContentMD5: createHash('md5').update(first).digest() });
    store.calls.length = 0;
    const resume = {
      container: 'c',
      blobName: 'b',
      partSizeBytes: MiB,
      blocks: [{ index: 1, size: MiB, md5: createHash('md5').update(first).digest('base64') }],
      bytesSent: MiB,
    };
    const result = await uploadBlockBlob({ container: store.container, containerName: 'c', blobName: 'b', source: bufferSource(source), resume });
    expect(store.calls).toEqual(['list', `stage 2 ${MiB}`, 'commit 2']);
    expect(result).toMatchObject({ partsUploaded: 1, resumed: true });
    expect(store.committed.get('b')).toEqual(source);
  });

  it('commits an empty blob for an empty source', async () => {
    const store = fakeContainer();
    const result = await uploadBlockBlob({ container: store.container, containerName: 'c', blobName: 'b', source: bufferSource(Buffer.alloc(0)) });
    expect(result).toMatchObject({ parts: 0, bytes: 0 });
    expect(store.committed.get('b')).toEqual(Buffer.alloc(0));
  });

  it('grows the block size so that a known size fits in 50 000 blocks', () => {
    expect(resolveBlockSize(8 * MiB, 100 * MiB)).toBe(8 * MiB);
    expect(resolveBlockSize(MiB, MAX_BLOCKS * MiB * 2)).toBe(2 * MiB);
    expect(() => resolveBlockSize(0, undefined)).toThrow(/partSizeBytes must be between 1 and/);
  });
});

describe('Azure addresses, credentials and errors', () => {
  it('parses and writes manifest entries as the service and its PHP client do', () => {
    const url = absUrl('acct', 'files', 'exp-15/1/files/x.csvpart_00001.gz');
    expect(url).toBe('azure://acct.blob.core.windows.net/files/exp-15/1/files/x.csvpart_00001.gz');
    expect(parseAbsUrl(url)).toEqual({ account: 'acct', container: 'files', blobName: 'exp-15/1/files/x.csvpart_00001.gz' });
    expect(() => parseAbsUrl('s3://bucket/key')).toThrow(/expected azure:\/\/<account>\.blob\.core\.windows\.net/);
    expect(manifestSchema.safeParse({ entries: [{ url }, { url: 's3://b/k' }] }).success).toBe(true);
    expect(manifestSchema.safeParse({ entries: [{ url: 'gs://b/k' }] }).success).toBe(true);
    expect(manifestSchema.safeParse({ entries: [{ url: 'ftp://b/k' }] }).success).toBe(false);
  });

  it('the emulator store writes and reads back its own entry URLs, and no other account or container', () => {
    const store = new AbsObjectStore(
      { blobEndpoint: 'http://127.0.0.1:1/acct', accountName: 'acct', accountKey: Buffer.alloc(32).toString('base64'), container: 'files' },
      900,
      60,
    );
    expect(store.keyOfEntryUrl(store.entryUrl('a/b.csv'))).toBe('a/b.csv');
    expect(store.keyOfEntryUrl(absUrl('other', 'files', 'a'))).toBeUndefined();
    expect(store.keyOfEntryUrl(absUrl('acct', 'other', 'a'))).toBeUndefined();
  });

  it('treats a SAS expiring within the margin as expired, with where and when in the message', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(() => assertAbsCredentialsFresh({ SASConnectionString: 'x', expiration: '2026-01-01T00:04:00+00:00' }, 'upload [blob=b]', 5 * 60_000, now)).toThrow(
      /upload \[blob=b\]: temporary credentials \(expiring 2026-01-01T00:04:00\+00:00\)/,
    );
    expect(() => assertAbsCredentialsFresh({ SASConnectionString: 'x', expiration: '2026-01-01T00:06:00+00:00' }, 'w', 5 * 60_000, now)).not.toThrow();
  });

  it('maps 403 to expired credentials, Md5Mismatch to a checksum error, other 4xx to a final error and 5xx to a retryable one', () => {
    const error = (statusCode: number, code: string) => Object.assign(new Error(code), { statusCode, code });
    const ctx = { container: 'c', blob: 'b', block: 3 };
    expect((mapAbsError(error(403, 'AuthenticationFailed'), 'upload', ctx) as SapiError).code).toBe(SapiErrorCode.CREDENTIALS_EXPIRED);
    expect((mapAbsError(error(400, 'Md5Mismatch'), 'upload', ctx) as SapiError).code).toBe(SapiErrorCode.CHECKSUM_MISMATCH);
    const notFound = mapAbsError(error(404, 'ContainerNotFound'), 'download', ctx) as SapiError;
    expect(notFound).toMatchObject({ code: SapiErrorCode.DOWNLOAD_FAILED, retryable: false });
    expect(notFound.message).toContain('download failed (ContainerNotFound 404) [container=c, blob=b, block=3]');
    expect(mapAbsError(error(503, 'ServerBusy'), 'upload', ctx) as SapiError).toMatchObject({ code: SapiErrorCode.UPLOAD_FAILED, retryable: true });
  });
});
