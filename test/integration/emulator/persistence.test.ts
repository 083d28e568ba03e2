import { rmSync } from 'node:fs';
import { createEmulator } from '../../../src/emulator';
import { startTestMinio } from './minio-helper';
import { client, emulatorOptions, expectSuccess, uploadViaImporter, waitForJob } from './support';

describe('persistence across restarts', () => {
  test('jobs left processing and waiting by close() finish, in order, after a restart on the same data folder', async () => {
    const minio = await startTestMinio();
    const options = emulatorOptions(minio);
    try {
      const first = await createEmulator(options);
      const api = client(first);
      expect((await api('POST', '/buckets', { json: { name: 'keep' } })).status).toBe(201);
      const fileA = await uploadViaImporter(api, 'id\n1\n');
      expectSuccess(await waitForJob(api, (await api('POST', '/buckets/in.c-keep/tables-async', { json: { name: 't', dataFileId: fileA } })).body.id));
      const fileB = await uploadViaImporter(api, 'id\n2\n3\n');
      const fileC = await uploadViaImporter(api, 'id\n4\n');
      first.faults.slowJob({ operationName: 'tableImport', ms: 60_000 });
      const processing = (await api('POST', '/tables/in.c-keep.t/import-async', { json: { dataFileId: fileB } })).body.id;
      const waiting = (await api('POST', '/tables/in.c-keep.t/import-async', { json: { dataFileId: fileC, incremental: true } })).body.id;
      await new Promise((r) => setTimeout(r, 200));
      expect((await api('GET', `/jobs/${processing}`)).body.status).toBe('processing');
      expect((await api('GET', `/jobs/${waiting}`)).body.status).toBe('waiting');
      await first.close();

      const second = await createEmulator(options);
      try {
        const api2 = client(second);
        const a = expectSuccess(await waitForJob(api2, processing));
        const b = expectSuccess(await waitForJob(api2, waiting));
        expect(a.results.totalRowsCount).toBe(2);
        expect(b.results.totalRowsCount).toBe(3);
        expect((await second.readTable('in.c-keep.t')).rows).toEqual([['2'], ['3'], ['4']]);
        expect((await api2('GET', '/jobs')).body.map((j: { id: number }) => j.id)).toEqual([waiting, processing, processing - 1]);
        expect((await api2('GET', `/files/${fileB}`)).body.sizeBytes).toBe(7);
        expect((await api2('GET', '/buckets/in.c-keep')).status).toBe(200);
        expect(await uploadViaImporter(api2, 'id\n5\n')).toBeGreaterThan(fileC);
      } finally {
        await second.close();
      }
    } finally {
      await minio.cleanup();
      rmSync(options.dataDir, { recursive: true, force: true });
    }
  });
});
