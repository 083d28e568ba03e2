import { rmSync } from 'node:fs';
import { createEmulator } from '../../../src/emulator';
import { startTestMinio } from './minio-helper';
import { client, emulatorOptions, expectSuccess, importTable, uploadViaImporter, waitForJob, type Json } from './support';

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

  test('typed tables, metadata, events and branches survive a restart; new metadata ids do not reuse old ones', async () => {
    const minio = await startTestMinio();
    const options = emulatorOptions(minio);
    try {
      const first = await createEmulator(options);
      const api = client(first);
      await api('POST', '/buckets', { json: { name: 'typed' } });
      const def = await api('POST', '/buckets/in.c-typed/tables-definition', {
        json: { name: 't', columns: [{ name: 'n', definition: { type: 'INTEGER', nullable: false } }] },
      });
      expectSuccess(await waitForJob(api, def.body.id));
      expectSuccess(await importTable(api, 'in.c-typed.t', 'n\n1\n2\n'));
      const meta = await api('POST', '/tables/in.c-typed.t/metadata', { json: { provider: 'user', metadata: [{ key: 'KBC.description', value: 'kept' }] } });
      expectSuccess(await waitForJob(api, (await api('POST', '/dev-branches', { json: { name: 'kept-branch' } })).body.id));
      const before = (await api('GET', '/tables/in.c-typed.t')).body;
      const events = (await api('GET', '/events')).body;
      await first.close();

      const second = await createEmulator(options);
      try {
        const api2 = client(second);
        const after = (await api2('GET', '/tables/in.c-typed.t')).body;
        expect(after).toMatchObject({
          isTyped: true,
          definition: before.definition,
          metadata: before.metadata,
          columnMetadata: before.columnMetadata,
          rowsCount: 2,
        });
        expect((await api2('GET', '/events')).body).toEqual(events);
        expect((await api2('GET', '/dev-branches/2')).body.name).toBe('kept-branch');
        const bad = await importTable(api2, 'in.c-typed.t', 'n\nx\n', { incremental: 1 });
        expect(bad.error.message).toContain('value "x" is not a valid NUMBER(38,0)'); // INTEGER as a Snowflake stack stores it
        const more = await api2('POST', '/tables/in.c-typed.t/metadata', { json: { provider: 'user', metadata: [{ key: 'other', value: 'new' }] } });
        const ids = [...before.columnMetadata.n, ...more.body.metadata].map((m: Json) => Number(m.id));
        expect(new Set(ids).size).toBe(ids.length);
        expect(Number(more.body.metadata[1].id)).toBeGreaterThan(Number(meta.body.metadata[0].id));
      } finally {
        await second.close();
      }
    } finally {
      await minio.cleanup();
      rmSync(options.dataDir, { recursive: true, force: true });
    }
  });

  test('snapshots survive a restart and restore; a table change left waiting by close() runs after it; snapshot ids are not reused (issue 39)', async () => {
    const minio = await startTestMinio();
    const options = emulatorOptions(minio);
    try {
      const first = await createEmulator(options);
      const api = client(first);
      expect((await api('POST', '/buckets', { json: { name: 'snap' } })).status).toBe(201);
      const fileA = await uploadViaImporter(api, 'id,v\n1,a\n2,b\n');
      expectSuccess(
        await waitForJob(api, (await api('POST', '/buckets/in.c-snap/tables-async', { json: { name: 't', dataFileId: fileA, primaryKey: 'id' } })).body.id),
      );
      const snapshot = expectSuccess(
        await waitForJob(api, (await api('POST', '/tables/in.c-snap.t/snapshots', { json: { description: 'kept' } })).body.id),
      ).results;
      first.faults.slowJob({ operationName: 'tableColumnAdd', ms: 60_000 });
      const adding = (await api('POST', '/tables/in.c-snap.t/columns', { json: { name: 'extra' } })).body.id;
      await first.close();

      const second = await createEmulator(options);
      try {
        const api2 = client(second);
        expect(expectSuccess(await waitForJob(api2, adding)).results.columns).toEqual(['id', 'v', 'extra']);
        // the same snapshot, its uri on the restarted emulator's address
        expect((await api2('GET', '/tables/in.c-snap.t/snapshots')).body).toEqual([{ ...snapshot, uri: `${second.url}/v2/storage/snapshots/${snapshot.id}` }]);
        const restored = expectSuccess(
          await waitForJob(api2, (await api2('POST', '/buckets/in.c-snap/tables-async', { json: { snapshotId: snapshot.id, name: 'back' } })).body.id),
        );
        expect(restored.results).toMatchObject({ columns: ['id', 'v'], primaryKey: ['id'], rowsCount: 2 });
        expect((await second.readTable('in.c-snap.back')).rows).toEqual([
          ['1', 'a'],
          ['2', 'b'],
        ]);
        const next = expectSuccess(await waitForJob(api2, (await api2('POST', '/tables/in.c-snap.t/snapshots', { json: {} })).body.id)).results as Json;
        expect(Number(next.id)).toBeGreaterThan(Number(snapshot.id));
      } finally {
        await second.close();
      }
    } finally {
      await minio.cleanup();
      rmSync(options.dataDir, { recursive: true, force: true });
    }
  });
});

describe('token permissions across a restart', () => {
  test('created tokens and the buckets they manage survive a restart, and token ids keep growing', async () => {
    const minio = await startTestMinio();
    const options = emulatorOptions(minio);
    let emulator = await createEmulator(options);
    try {
      const master = client(emulator);
      const created = (await master('POST', '/tokens', { json: { canManageBuckets: true } })).body;
      expect((await client(emulator)('POST', '/buckets', { json: { name: 'kept' }, token: created.token })).status).toBe(201);
      await emulator.close();
      emulator = await createEmulator(options);
      const api = client(emulator);
      const verified = (await api('GET', '/tokens/verify', { token: created.token })).body;
      expect(verified).toMatchObject({ id: created.id, canManageBuckets: true, bucketPermissions: { 'in.c-kept': 'manage' } });
      expect((await api('DELETE', '/buckets/in.c-kept', { token: created.token })).status).toBe(204);
      const next = (await api('POST', '/tokens', { json: {} })).body;
      expect(Number(next.id)).toBeGreaterThan(Number(created.id));
    } finally {
      await emulator.close();
      await minio.cleanup();
      rmSync(options.dataDir, { recursive: true, force: true });
    }
  });
});
