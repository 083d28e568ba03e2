/**
 * The operations staging needs of every adapter of the one `ObjectStore` interface, against the real stores:
 * Azure on Azurite, GCS on fake-gcs-server, S3 on MinIO under a key prefix, and a local folder. The same sequence on
 * each: small writes, a streamed upload, a prefix listing in order, ranged reads and heads, deletes of present and
 * missing keys.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { ContainerClient, StorageSharedKeyCredential } from '@azure/storage-blob';
import { Agent, request } from 'undici';
import { startAzurite, type AzuriteHandle } from '../../../src/dev/azurite';
import { startFakeGcs, type FakeGcsHandle } from '../../../src/dev/gcs';
import { absStore } from '../../../src/object-storage/abs-store';
import { gcsStore } from '../../../src/object-storage/gcs-store';
import { localStore } from '../../../src/object-storage/local-store';
import { type ObjectStore } from '../../../src/object-storage/object-store';
import { s3Store } from '../../../src/object-storage/s3-store';
import { readText, writeStream } from '../../../src/object-storage/stage-store';
import { startTestMinio, type TestMinio } from './minio-helper';

const dir = mkdtempSync(join(tmpdir(), 'store-adapters-'));
let azurite: AzuriteHandle;
let gcs: FakeGcsHandle;
let minio: TestMinio;
const dispatcher = new Agent();

beforeAll(async () => {
  [azurite, gcs, minio] = await Promise.all([
    startAzurite({ dataDir: join(dir, 'azurite') }),
    startFakeGcs({ dataDir: join(dir, 'fake-gcs') }),
    startTestMinio(),
  ]);
}, 120_000);

afterAll(async () => {
  await Promise.all([azurite?.stop(), gcs?.stop(), minio?.stop()]);
  await dispatcher.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The store of each adapter, on a fresh container of its own. */
const adapters: Array<[string, () => Promise<ObjectStore>]> = [
  [
    'Azure (Azurite)',
    async () => {
      const container = new ContainerClient(
        `${azurite.blobEndpoint}/staging-${Date.now()}`,
        new StorageSharedKeyCredential(azurite.accountName, azurite.accountKey),
      );
      await container.create();
      return absStore({ containerName: container.containerName, container, accountName: azurite.accountName });
    },
  ],
  [
    'GCS (fake-gcs-server)',
    async () => {
      const bucket = `staging-${Date.now()}`;
      const res = await request(`${gcs.endpoint}/storage/v1/b?project=${gcs.projectId}`, {
        method: 'POST',
        body: JSON.stringify({ name: bucket }),
        headers: { 'content-type': 'application/json' },
      });
      await res.body.dump();
      expect(res.statusCode).toBe(200);
      const credentials = { access_token: 'token', projectId: gcs.projectId, expiration: new Date(Date.now() + 3600_000).toISOString() };
      return gcsStore({ bucket, credentials, endpoint: gcs.endpoint, dispatcher });
    },
  ],
  [
    'S3 (MinIO, under a prefix, bucket created on first use)',
    async () => s3Store({ s3: minio.admin, bucket: `staging-${Date.now()}`, prefix: 'root/of/staging', createBucket: true }),
  ],
  ['a local folder', async () => localStore(mkdtempSync(join(dir, 'local-')))],
];

describe.each(adapters)('ObjectStore adapter: %s', (_name, open) => {
  it('writes, lists by prefix in order, reads from an offset, measures and deletes (missing keys ignored)', async () => {
    const store = await open();
    await store.put('run/r1/p2/t.jsonl', 'b\n');
    await store.put('run/r1/p1/t.jsonl', Buffer.from('a\n'));
    await store.put('run/r1/p1/t.jsonl', 'a2\n'); // replaced
    await store.put('other/x.jsonl', 'z');
    const rows = Array.from({ length: 20_000 }, (_, i) => `${i},row ${i}\n`).join('');
    await writeStream(store, 'run/csv/t.csv', Readable.from([rows.slice(0, 1000), rows.slice(1000)]));

    expect(await store.list('run/r')).toEqual(['run/r1/p1/t.jsonl', 'run/r1/p2/t.jsonl']);
    expect(await store.list('run/')).toEqual(['run/csv/t.csv', 'run/r1/p1/t.jsonl', 'run/r1/p2/t.jsonl']);
    expect(await store.list('nothing/')).toEqual([]);
    expect(await readText(store, 'run/r1/p1/t.jsonl')).toBe('a2\n');
    expect(await readText(store, 'run/csv/t.csv')).toBe(rows);
    expect(await store.reader('run/csv/t.csv').size()).toBe(Buffer.byteLength(rows));
    const tail = await store.reader('run/csv/t.csv').get(Buffer.byteLength(rows) - 9);
    let text = '';
    for await (const chunk of tail.body) text += String(chunk);
    expect({ text, total: tail.total, fromStart: tail.fromStart }).toEqual({
      text: '9,row 19999\n'.slice(-9),
      total: Buffer.byteLength(rows),
      fromStart: true,
    });

    await store.delete(['run/r1/p2/t.jsonl', 'run/r1/p9/missing.jsonl']);
    expect(await store.list('run/')).toEqual(['run/csv/t.csv', 'run/r1/p1/t.jsonl']);
    await store.delete(await store.list('run/'));
    expect(await store.list('')).toEqual(['other/x.jsonl']);
    expect(store.keyOf(store.urlOf('other/x.jsonl'))).toBe('other/x.jsonl');
    store.close();
  });
});
