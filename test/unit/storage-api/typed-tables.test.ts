import { createStorageClient, type StorageClient } from '../../../src/storage-api/client';
import { startTableDefinitionOnce } from '../../../src/storage-api/reconcile';
import { tableMetadataAnswerSchema, typedTableSchema } from '../../../src/storage-api/typed-schemas';
import { json, reset, ScriptedServer } from './scripted-server';

const definitionJob = (id: number, runId: string | null, name = 't', bucketId = 'in.c-a') => ({
  id,
  status: 'waiting',
  url: `http://x/v2/storage/jobs/${id}`,
  operationName: 'tableDefinitionCreate',
  tableId: `${bucketId}.${name}`,
  runId,
  operationParams: { bucketId, name },
  createdTime: new Date().toISOString(),
});

const columns = [
  { name: 'id', definition: { type: 'INTEGER', nullable: false } },
  { name: 'price', definition: { type: 'NUMBER', length: '10,2' } },
];

describe('typed tables and metadata in the Storage client', () => {
  let server: ScriptedServer;
  let client: StorageClient;
  beforeEach(async () => {
    server = await new ScriptedServer().start();
    client = createStorageClient({ url: server.url, token: 't', retry: { baseDelayMs: 1, maxDelayMs: 2 } });
  });
  afterEach(async () => {
    await client.close();
    await server.stop();
  });

  it('posts tables-definition as the service takes it (name, primaryKeysNames, columns with their definition) with the run marker', async () => {
    server.on('POST', '/v2/storage/buckets/in.c-a/tables-definition', json(202, definitionJob(5, 'm-1')));
    const job = await client.createTableDefinitionAsync({ bucketId: 'in.c-a', name: 't', columns, primaryKeysNames: ['id'], runId: 'm-1' });
    expect(job).toMatchObject({ id: 5, operationName: 'tableDefinitionCreate' });
    const [seen] = server.requests;
    expect(JSON.parse(seen!.body.toString())).toEqual({ name: 't', primaryKeysNames: ['id'], columns });
    expect(seen!.headers['x-kbc-runid']).toBe('m-1');
  });

  it('posts table metadata as {provider, metadata: [{key, value}]} and reads both answer shapes', async () => {
    server.on(
      'POST',
      '/v2/storage/tables/in.c-a.t/metadata',
      json(201, { metadata: [{ id: '7', key: 'KBC.description', value: 'd', provider: 'me', timestamp: 'x' }], columnsMetadata: {} }),
    );
    const answer = await client.setTableMetadata({ tableId: 'in.c-a.t', provider: 'me', metadata: [{ key: 'KBC.description', value: 'd' }] });
    expect(answer.metadata).toEqual([{ id: '7', key: 'KBC.description', value: 'd', provider: 'me', timestamp: 'x' }]);
    expect(JSON.parse(server.requests[0]!.body.toString())).toEqual({ provider: 'me', metadata: [{ key: 'KBC.description', value: 'd' }] });
    // older stacks answered the list of entries itself
    expect(tableMetadataAnswerSchema.parse([{ id: 8, key: 'k', value: null }]).metadata).toEqual([{ id: '8', key: 'k', value: '' }]);
  });

  it('reads isTyped and the definition of a table detail, and an untyped table of an older stack as not typed', () => {
    const typed = typedTableSchema.parse({
      id: 'in.c-a.t',
      name: 't',
      isTyped: true,
      definition: { primaryKeysNames: ['id'], columns: [{ ...columns[0], basetype: 'INTEGER' }] },
    });
    expect(typed.isTyped).toBe(true);
    expect(typed.definition?.columns[0]).toMatchObject({ name: 'id', basetype: 'INTEGER' });
    expect(typedTableSchema.parse({ id: 'in.c-a.u', name: 'u' }).isTyped).toBe(false);
  });

  describe('startTableDefinitionOnce', () => {
    const definition = { bucketId: 'in.c-a', name: 't', columns, runId: 'ours' };

    it('finds the job of a POST whose response was lost by its marker, without posting again', async () => {
      server.on('POST', '/v2/storage/buckets/in.c-a/tables-definition', reset);
      server.on('GET', '/v2/storage/jobs', json(200, [definitionJob(9, 'someone-else'), definitionJob(8, 'ours')]));
      const r = await startTableDefinitionOnce(client, { definition, reconcileDelaysMs: [0] });
      expect(r).toMatchObject({ via: 'found', posts: 1, job: { id: 8 } });
      expect(server.count('POST', '/v2/storage/buckets/in.c-a/tables-definition')).toBe(1);
    });

    it('with lookupFirst, reuses the job of a previous attempt and posts nothing', async () => {
      server.on('GET', '/v2/storage/jobs', json(200, [definitionJob(8, 'ours')]));
      expect(await startTableDefinitionOnce(client, { definition, lookupFirst: true })).toMatchObject({ via: 'found', posts: 0, job: { id: 8 } });
      expect(server.count('POST', '/v2/storage/buckets/in.c-a/tables-definition')).toBe(0);
    });

    it('never adopts a job of another run or another table, and does not re-create a table that exists without a job of ours', async () => {
      server.on('POST', '/v2/storage/buckets/in.c-a/tables-definition', reset);
      server.on('GET', '/v2/storage/jobs', json(200, [definitionJob(9, 'someone-else'), definitionJob(7, null, 'other')]));
      server.on('GET', '/v2/storage/tables/in.c-a.t', json(200, { id: 'in.c-a.t', name: 't' }));
      await expect(startTableDefinitionOnce(client, { definition, reconcileDelaysMs: [0] })).rejects.toMatchObject({
        code: 'SAPI_ALREADY_EXISTS',
        retryable: false,
        message: expect.stringMatching(/^table in\.c-a\.t exists but no tableDefinitionCreate job of this run was found after a lost response/),
      });
      expect(server.count('POST', '/v2/storage/buckets/in.c-a/tables-definition')).toBe(1);
    });

    it('posts once more when the lost POST created neither a job nor the table', async () => {
      server.on('POST', '/v2/storage/buckets/in.c-a/tables-definition', reset, json(202, definitionJob(10, 'ours')));
      server.on('GET', '/v2/storage/jobs', json(200, []));
      server.on('GET', '/v2/storage/tables/in.c-a.t', json(404, { error: 'not found', code: 'storage.tables.notFound' }));
      expect(await startTableDefinitionOnce(client, { definition, reconcileDelaysMs: [0] })).toMatchObject({ via: 'posted', posts: 2, job: { id: 10 } });
    });
  });
});
