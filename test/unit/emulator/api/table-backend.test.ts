import { createEmulator, DEFAULT_STACK_REGION } from '../../../../src/emulator';
import { client, createBucket, memoryEmulatorOptions, useMemoryEmulator } from '../../../harness/emulator-api';

/**
 * The table backend the emulator answers as: Snowflake by default (the backend of most stacks), BigQuery on request;
 * never a backend no stack has. Its name is where the service puts it (`owner.defaultBackend`, a bucket's `backend`)
 * and in the index's `emulator` section.
 */
describe('table backend', () => {
  const env = useMemoryEmulator();

  test('by default the emulator answers as a Snowflake stack: owner, buckets and the index say snowflake', async () => {
    const owner = (await env.api('GET', '/tokens/verify')).body.owner;
    expect(owner).toMatchObject({
      defaultBackend: 'snowflake',
      assignedBackends: ['snowflake'],
      hasSnowflake: true,
      hasBigquery: false,
      hasRedshift: false,
      hasSynapse: false,
      hasExasol: false,
      hasTeradata: false,
    });
    const bucketId = await createBucket(env.api, 'backend');
    expect((await env.api('GET', `/buckets/${bucketId}`)).body.backend).toBe('snowflake');
    expect((await env.api('GET', '/buckets')).body.find((b: { id: string }) => b.id === bucketId).backend).toBe('snowflake');
    const index = (await env.api('GET', '', { token: null })).body;
    expect(index.emulator).toEqual({
      tableBackend: 'snowflake',
      fileStorageProvider: 'aws',
      region: DEFAULT_STACK_REGION,
      slicedExports: true,
      exportSliceSizeBytes: 64 * 1024 * 1024,
    });
  });

  test("an unknown bucket answers 404 with the service's text", async () => {
    const res = await env.api('GET', '/buckets/in.c-nowhere');
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: 'storage.buckets.notFound', error: 'The bucket "in.c-nowhere" was not found in the project "1"' });
  });

  test('with tableBackend bigquery the emulator answers as a BigQuery stack', async () => {
    const emulator = await createEmulator(memoryEmulatorOptions({ tableBackend: 'bigquery' }));
    try {
      const api = client(emulator);
      expect((await api('GET', '/tokens/verify')).body.owner).toMatchObject({
        defaultBackend: 'bigquery',
        assignedBackends: ['bigquery'],
        hasSnowflake: false,
        hasBigquery: true,
      });
      expect((await api('POST', '/buckets', { json: { name: 'bq' } })).body.backend).toBe('bigquery');
      expect((await api('GET', '', { token: null })).body.emulator.tableBackend).toBe('bigquery');
    } finally {
      await emulator.close();
    }
  });

  test('an unknown tableBackend is refused when the emulator starts', async () => {
    await expect(createEmulator(memoryEmulatorOptions({ tableBackend: 'duckdb' as never }))).rejects.toThrow(/tableBackend/);
  });
});
