import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import type { GcsClient, GcsSessionStatus } from '../../../src/object-storage/gcs-client';
import { GCS_CHUNK_GRANULARITY, resolveChunkSize, uploadGcsObject, type GcsUploadState } from '../../../src/object-storage/gcs-upload';
import type { ByteSource } from '../../../src/object-storage/sources';

const KiB = 1024;

/**
 * An in-memory resumable-upload store with the protocol's rules: a chunk lands at the offset it names (bytes the
 * session holds are skipped), a status query reports the persisted bytes, a session completes once it holds the
 * declared total. `persistAtMost` makes it persist only part of a chunk, as the real service may.
 */
class FakeSessions {
  sessions = new Map<string, { key: string; data: Buffer; done: boolean }>();
  /** Bytes received per chunk request, in order. */
  received: { uri: string; start: number; bytes: number }[] = [];
  persistAtMost = Infinity;

  client(): GcsClient {
    const fake = {
      bucket: 'b',
      createSession: async (key: string) => {
        const uri = `http://store/upload?upload_id=${this.sessions.size + 1}`;
        this.sessions.set(uri, { key, data: Buffer.alloc(0), done: false });
        return uri;
      },
      putChunk: async (uri: string, start: number, data: Buffer, total: number | undefined): Promise<GcsSessionStatus> => {
        this.received.push({ uri, start, bytes: data.length });
        const session = this.sessions.get(uri);
        if (!session) return { state: 'gone' };
        if (start > session.data.length) throw new Error(`gap: chunk at ${start}, session holds ${session.data.length}`);
        const fresh = data.subarray(session.data.length - start).subarray(0, this.persistAtMost);
        session.data = Buffer.concat([session.data, fresh]);
        return this.status(session, total);
      },
      querySession: async (uri: string, total: number | undefined): Promise<GcsSessionStatus> => {
        const session = this.sessions.get(uri);
        return session ? this.status(session, total) : { state: 'gone' };
      },
    };
    return fake as unknown as GcsClient;
  }

  private status(session: { key: string; data: Buffer; done: boolean }, total: number | undefined): GcsSessionStatus {
    if (session.done || (total !== undefined && session.data.length >= total)) {
      session.done = true;
      return {
        state: 'complete',
        object: { name: session.key, bucket: 'b', size: String(session.data.length), md5Hash: createHash('md5').update(session.data).digest('base64') },
      };
    }
    return { state: 'open', persisted: session.data.length };
  }
}

function bufferSource(data: Buffer): ByteSource {
  return { description: 'memory', size: data.length, open: async (start) => Readable.from([data.subarray(start)]) };
}

describe('GCS resumable upload', () => {
  it('rounds the chunk size up to a multiple of 256 KiB', () => {
    expect(resolveChunkSize(5 * 1024 * KiB)).toBe(5 * 1024 * KiB);
    expect(resolveChunkSize(300 * KiB)).toBe(2 * GCS_CHUNK_GRANULARITY);
    expect(resolveChunkSize(1)).toBe(GCS_CHUNK_GRANULARITY);
  });

  it('sends every byte once in chunks, holding at most two chunk buffers, and checks the finished object', async () => {
    const store = new FakeSessions();
    const data = randomBytes(1000 * KiB);
    const result = await uploadGcsObject({ client: store.client(), bucket: 'b', key: 'k', source: bufferSource(data), partSizeBytes: 256 * KiB });
    expect(result).toMatchObject({ parts: 4, partsUploaded: 4, bytes: data.length, bytesUploaded: data.length, resumed: false });
    expect(result.sha256).toBe(createHash('sha256').update(data).digest('hex'));
    expect([...store.sessions.values()][0]!.data.equals(data)).toBe(true);
    // the chunk in flight and the next one filling: memory does not grow with the file
    expect(result.partBuffers).toBeLessThanOrEqual(2);
  });

  it('resends the rest of a chunk the store persisted only in part', async () => {
    const store = new FakeSessions();
    store.persistAtMost = 256 * KiB;
    const data = randomBytes(1024 * KiB);
    const result = await uploadGcsObject({ client: store.client(), bucket: 'b', key: 'k', source: bufferSource(data), partSizeBytes: 512 * KiB });
    expect([...store.sessions.values()][0]!.data.equals(data)).toBe(true);
    expect(store.received.map((r) => r.start)).toEqual([0, 256 * KiB, 512 * KiB, 768 * KiB]);
    expect(result.parts).toBe(2);
  });

  it('resumes at the offset the session reports, beyond the heartbeat, sending nothing below it', async () => {
    const store = new FakeSessions();
    const data = randomBytes(1024 * KiB);
    // a first attempt sent two chunks, but heartbeated after the first only, then died
    const client = store.client();
    const uri = await client.createSession('k', { contentType: 'application/octet-stream' });
    await client.putChunk(uri, 0, data.subarray(0, 256 * KiB), data.length, {});
    await client.putChunk(uri, 256 * KiB, data.subarray(256 * KiB, 512 * KiB), data.length, {});
    store.received = [];
    const heartbeat: GcsUploadState = { bucket: 'b', key: 'k', sessionUri: uri, chunkSizeBytes: 256 * KiB, bytesSent: 256 * KiB };
    const progress: number[] = [];
    const result = await uploadGcsObject({
      client,
      bucket: 'b',
      key: 'k',
      source: bufferSource(data),
      partSizeBytes: 256 * KiB,
      resume: heartbeat,
      onProgress: (s) => progress.push(s.bytesSent),
    });
    expect(result).toMatchObject({ resumed: true, parts: 4, partsUploaded: 2, bytesUploaded: 512 * KiB });
    expect(store.received.every((r) => r.start >= 512 * KiB)).toBe(true);
    expect(progress[0]).toBe(512 * KiB);
    expect(store.sessions.get(uri)!.data.equals(data)).toBe(true);
  });

  it('opens a new session when the store no longer knows the old one', async () => {
    const store = new FakeSessions();
    const data = randomBytes(300 * KiB);
    const heartbeat: GcsUploadState = {
      bucket: 'b',
      key: 'k',
      sessionUri: 'http://store/upload?upload_id=lost',
      chunkSizeBytes: 256 * KiB,
      bytesSent: 256 * KiB,
    };
    const result = await uploadGcsObject({
      client: store.client(),
      bucket: 'b',
      key: 'k',
      source: bufferSource(data),
      partSizeBytes: 256 * KiB,
      resume: heartbeat,
    });
    expect(result).toMatchObject({ resumed: false, bytesUploaded: data.length });
  });

  it('uploads an empty source as one empty final request', async () => {
    const store = new FakeSessions();
    const result = await uploadGcsObject({ client: store.client(), bucket: 'b', key: 'k', source: bufferSource(Buffer.alloc(0)) });
    expect(result).toMatchObject({ bytes: 0, parts: 1 });
    expect(store.received).toEqual([expect.objectContaining({ start: 0, bytes: 0 })]);
  });

  it('refuses an object the store finished with other bytes than were sent', async () => {
    const store = new FakeSessions();
    const data = randomBytes(512 * KiB);
    const client = store.client();
    const uri = await client.createSession('k', { contentType: 'application/octet-stream' });
    // a store that committed a different first half (what upstream fake-gcs-server does on a status query)
    await client.putChunk(uri, 0, randomBytes(256 * KiB), undefined, {});
    const resume: GcsUploadState = { bucket: 'b', key: 'k', sessionUri: uri, chunkSizeBytes: 256 * KiB, bytesSent: 256 * KiB };
    await expect(uploadGcsObject({ client, bucket: 'b', key: 'k', source: bufferSource(data), partSizeBytes: 256 * KiB, resume })).rejects.toMatchObject({
      code: 'SAPI_CHECKSUM_MISMATCH',
    });
  });
});
