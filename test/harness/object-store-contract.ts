/**
 * The contract every object store of the emulator keeps (`src/emulator/object-store.ts`): the same cases run against
 * the memory store (unit tier) and MinIO, Azurite and fake-gcs-server (integration tier,
 * `test/integration/emulator/object-store-contract.test.ts`). What the emulator's routes and jobs rely on: bytes in
 * are bytes out, sizes, missing objects, replacing, deleting one key or a prefix, large bodies in parts, presigned
 * reads, manifest entry URLs, and the backend fields of prepare and federation tokens (or a loud refusal).
 */
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { type ObjectStore } from '../../src/emulator/object-store';

/** A store under test and how to stop what it runs on. */
export interface ContractStore {
  store: ObjectStore;
  stop(): Promise<void>;
}

/** The fields `uploadFields` answers on each backend, or `refused` (the memory store: 501 with this code). */
export type ContractUploadFields =
  { key: 'uploadParams' | 'absUploadParams' | 'gcsUploadParams'; readKey: 'credentials' | 'absCredentials' | 'gcsCredentials' } | { refused: string };

/** Larger than one part of the emulator's own uploads (8 MiB), so a put goes in several parts or blocks. */
const LARGE_BYTES = 20 * 1024 * 1024 + 123;

async function bytesOf(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string));
  return Buffer.concat(chunks);
}

const sha = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

/** A stream of `size` pseudo-random bytes in 1 MiB chunks, and the digest of all of them. */
function randomStream(size: number): { stream: Readable; digest: string } {
  const chunks: Buffer[] = [];
  for (let left = size; left > 0; left -= 1024 * 1024) chunks.push(randomBytes(Math.min(left, 1024 * 1024)));
  return { stream: Readable.from(chunks), digest: sha(Buffer.concat(chunks)) };
}

/** Registers the contract's cases for one store; `start` runs once for the block. */
export function objectStoreContract(name: string, start: () => Promise<ContractStore>, fields: ContractUploadFields): void {
  describe(`object store contract: ${name}`, () => {
    let running: ContractStore;
    let store: ObjectStore;
    /** Keys of this run, under one prefix so runs on a shared server do not meet. */
    const base = `contract/${Date.now().toString(36)}-${randomBytes(4).toString('hex')}/`;

    beforeAll(async () => {
      running = await start();
      store = running.store;
      await store.ensureBucket();
      await store.ensureBucket(); // twice: an existing bucket is no error
    });
    afterAll(async () => {
      store?.destroy();
      await running?.stop();
    });

    test('put then get, getText and size answer the bytes written', async () => {
      const bytes = Buffer.from('id,name\n1,"café"\n', 'utf8');
      await store.put(`${base}small.csv`, bytes, 'text/csv');
      expect(await bytesOf(await store.get(`${base}small.csv`))).toEqual(bytes);
      expect(await store.getText(`${base}small.csv`)).toBe('id,name\n1,"café"\n');
      expect(await store.size(`${base}small.csv`)).toBe(bytes.length);
    });

    test('an empty object exists with size 0', async () => {
      await store.put(`${base}empty`, '');
      expect(await store.size(`${base}empty`)).toBe(0);
      expect(await store.getText(`${base}empty`)).toBe('');
    });

    test('a missing object has no size and its get rejects', async () => {
      expect(await store.size(`${base}missing`)).toBeUndefined();
      await expect(store.get(`${base}missing`)).rejects.toThrow();
    });

    test('a put replaces the object at its key', async () => {
      await store.put(`${base}replaced`, 'first version, longer');
      await store.put(`${base}replaced`, 'second');
      expect(await store.getText(`${base}replaced`)).toBe('second');
      expect(await store.size(`${base}replaced`)).toBe(6);
    });

    test('a stream larger than one part is stored whole (multipart upload, blocks) with its announced length', async () => {
      const { stream, digest } = randomStream(LARGE_BYTES);
      await store.put(`${base}large.bin`, stream, undefined, LARGE_BYTES);
      expect(await store.size(`${base}large.bin`)).toBe(LARGE_BYTES);
      expect(sha(await bytesOf(await store.get(`${base}large.bin`)))).toBe(digest);
    });

    test('delete of a key removes that object only; delete with prefix removes the key and every key it starts (a sliced file)', async () => {
      // keys as a sliced file and its neighbours have them: `<key>`, `<key>manifest`, `<key>part_00000`
      for (const key of ['one.csv', 'two.csv', 'sliced.csv', 'sliced.csvmanifest', 'sliced.csvpart_00000', 'slicedother.csv'])
        await store.put(`${base}${key}`, key);
      await store.delete(`${base}one.csv`, false);
      expect(await store.size(`${base}one.csv`)).toBeUndefined();
      expect(await store.getText(`${base}two.csv`)).toBe('two.csv');
      await store.delete(`${base}sliced.csv`, true);
      for (const key of ['sliced.csv', 'sliced.csvmanifest', 'sliced.csvpart_00000']) expect(await store.size(`${base}${key}`)).toBeUndefined();
      expect(await store.getText(`${base}slicedother.csv`)).toBe('slicedother.csv');
      expect(await store.getText(`${base}two.csv`)).toBe('two.csv');
      await store.delete(`${base}never-written`, false); // no error
      await store.delete(`${base}never-written/`, true);
    });

    test('a presigned URL reads the object over plain HTTP, without credentials', async () => {
      const bytes = randomBytes(64 * 1024);
      await store.put(`${base}presigned/file 1.csv`, bytes);
      const res = await request(store.presign(`${base}presigned/file 1.csv`));
      const body = Buffer.from(await res.body.arrayBuffer());
      expect(res.statusCode).toBe(200);
      expect(sha(body)).toBe(sha(bytes));
    });

    test('a manifest entry URL names the store and leads back to its key; a foreign URL is not its own', async () => {
      const url = store.entryUrl(`${base}part_00000`);
      expect(url).toMatch(/^(s3|azure|gs):\/\//);
      expect(store.keyOfEntryUrl(url)).toBe(`${base}part_00000`);
      expect(store.keyOfEntryUrl('https://elsewhere.example/x')).toBeUndefined();
    });

    if ('refused' in fields) {
      test('prepare fields and federation tokens are refused loudly: no object-storage server to hand credentials for', async () => {
        await expect(store.uploadFields(`${base}prepared.csv`, false, false)).rejects.toMatchObject({ status: 501, code: fields.refused });
        await expect(store.readFields(`${base}prepared.csv`, false)).rejects.toMatchObject({ status: 501, code: fields.refused });
      });
    } else {
      test(`prepare answers ${fields.key} and a federation token ${fields.readKey} naming the key`, async () => {
        const upload = await store.uploadFields(`${base}prepared.csv`, false, false);
        expect(Object.keys(upload)).toEqual([fields.key]);
        expect(JSON.stringify(upload)).toContain(`${base}prepared.csv`);
        const read = await store.readFields(`${base}prepared.csv`, false);
        expect(read[fields.readKey]).toBeDefined();
        expect(JSON.stringify(read)).toContain(`${base}prepared.csv`);
      });
    }
  });
}
