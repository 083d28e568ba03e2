import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createEmulator } from '../../../../src/emulator';
import {
  client,
  createBucket,
  createTable,
  expectSuccess,
  memoryEmulatorOptions,
  uploadViaImporter,
  useMemoryEmulator,
  waitForJob,
} from '../../../harness/emulator-api';

/** `store: 'memory'`: files, tables and records in the emulator's memory, files served by the emulator itself. */
describe('the emulator on the memory store', () => {
  const env = useMemoryEmulator({ slicedExports: false });

  test('an uploaded file downloads from its url, served by the emulator at a signed path outside the request log', async () => {
    const fileId = await uploadViaImporter(env.api, 'a,b\n1,2\n');
    const file = (await env.api('GET', `/files/${fileId}`)).body;
    expect(file).toMatchObject({ provider: 'aws', region: 'us-east-1', sizeBytes: 8 });
    expect(file.url.startsWith(`${env.emulator.url}/_objects/`)).toBe(true);
    const before = env.emulator.requests.length;
    const res = await fetch(file.url);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('a,b\n1,2\n');
    expect(env.emulator.requests.length).toBe(before);
  });

  test('a url with a changed key or signature, or none, answers 403 AccessDenied; a deleted file 404 NoSuchKey', async () => {
    const fileId = await uploadViaImporter(env.api, 'x\n1\n');
    const { url } = (await env.api('GET', `/files/${fileId}`)).body as { url: string };
    const signed = new URL(url);
    const otherKey = new URL(url);
    otherKey.pathname = `${otherKey.pathname}x`;
    const badSignature = new URL(url);
    badSignature.searchParams.set('signature', '0'.repeat(64));
    const unsigned = new URL(url);
    unsigned.search = '';
    for (const u of [otherKey, badSignature, unsigned]) {
      const res = await fetch(u);
      expect(res.status).toBe(403);
      expect(await res.text()).toContain('<Code>AccessDenied</Code>');
    }
    expect((await env.api('DELETE', `/files/${fileId}`)).status).toBe(204);
    const gone = await fetch(signed);
    expect(gone.status).toBe(404);
    expect(await gone.text()).toContain('<Code>NoSuchKey</Code>');
  });

  test('prepare and federationToken=1 answer 501 naming the importer and the server store, and create no file', async () => {
    const filesBefore = (await env.api('GET', '/files')).body.length;
    const prepared = await env.api('POST', '/files/prepare', { json: { name: 'direct.csv' } });
    expect(prepared.status).toBe(501);
    expect(prepared.body).toMatchObject({
      code: 'emulator.memoryStoreUnsupported',
      error: expect.stringMatching(/importer \(POST \/import\/upload-file\).*store "server"/),
    });
    expect((await env.api('GET', '/files')).body.length).toBe(filesBefore);
    const fileId = await uploadViaImporter(env.api, 'x\n1\n');
    const federated = await env.api('GET', `/files/${fileId}?federationToken=1`);
    expect(federated.status).toBe(501);
    expect(federated.body.code).toBe('emulator.memoryStoreUnsupported');
  });

  test('tables load and export through the memory store', async () => {
    await createBucket(env.api, 'mem');
    expectSuccess(await createTable(env.api, 'in.c-mem', 't', 'id,name\n1,a\n2,b\n'));
    expect(await env.emulator.readTable('in.c-mem.t')).toEqual({
      columns: ['id', 'name'],
      rows: [
        ['1', 'a'],
        ['2', 'b'],
      ],
    });
    const job = expectSuccess(await waitForJob(env.api, (await env.api('POST', '/tables/in.c-mem.t/export-async', { json: {} })).body.id));
    const file = (await env.api('GET', `/files/${job.results.file.id}`)).body;
    expect(await fetch(file.url).then((r) => r.text())).toBe('"id","name"\n"1","a"\n"2","b"\n');
  });

  test('nothing is written to the data folder but temp files, and a restart on it starts empty', async () => {
    const options = memoryEmulatorOptions();
    try {
      const first = await createEmulator(options);
      await createBucket(client(first), 'gone');
      await first.close();
      expect(existsSync(join(options.dataDir, 'state.jsonl'))).toBe(false);
      expect(readdirSync(options.dataDir)).toEqual(['tmp']);
      const second = await createEmulator(options);
      try {
        expect((await client(second)('GET', '/buckets')).body).toEqual([]);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(options.dataDir, { recursive: true, force: true });
    }
  });

  test('store "memory" with an object-storage server or another backend, and an unknown store, are refused at start', async () => {
    const s3 = { endpoint: 'http://127.0.0.1:9', region: 'us-east-1', accessKeyId: 'k', secretAccessKey: 's', bucket: 'sapi-files' };
    await expect(createEmulator(memoryEmulatorOptions({ s3 }))).rejects.toThrow(
      /store "memory" keeps files in the emulator's memory; drop s3 or use store "server"/,
    );
    await expect(createEmulator(memoryEmulatorOptions({ backend: 'gcp' }))).rejects.toThrow(
      /store "memory" answers as an aws stack; backend "gcp" needs store "server"/,
    );
    await expect(createEmulator(memoryEmulatorOptions({ store: 'disk' as never }))).rejects.toThrow(/invalid emulator options: store/);
  });
});
