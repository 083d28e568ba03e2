/**
 * extractWorkflow with pages staged on S3 (MinIO, the worker's own keys): the staging bucket is created on first use,
 * the layout is `<prefix>/<runKey>/r<run>/p<first>-<last>/<table>.jsonl`, the CSVs are loaded from `s3://`, and
 * all of it is removed after the load unless `keepStaging`.
 */
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { createSampleApi, makeUsers, ordersOf, type SampleApi } from '../../../src/sample-api';
import type { ExtractResult } from '../../../src/contracts/extract';
import { startSapiTestEnv, type SapiTestEnv } from '../../harness/sapi-env';
import { testStack } from '../../harness/stack-state';
import { expectTablesLike, FAST_FETCH, plainLoop, sampleConfig } from './support';

describe('extractWorkflow staging on s3://', () => {
  const prefix = `runs-${Date.now().toString(36)}`;
  let env: SapiTestEnv;
  let api: SampleApi;
  let s3: S3Client;

  beforeAll(async () => {
    const { minio } = testStack();
    const keys = {
      AWS_ACCESS_KEY_ID: minio.accessKeyId,
      AWS_SECRET_ACCESS_KEY: minio.secretAccessKey,
      AWS_ENDPOINT_URL_S3: minio.endpoint,
      AWS_REGION: minio.region,
    };
    [env, api] = await Promise.all([
      startSapiTestEnv('extract-s3', {
        // the worker's own keys come from its settings only: the test process's environment has none
        env: { ...keys, SAPI_STAGING_URL: `s3://extract-staging/${prefix}` },
      }),
      createSampleApi({ records: 25, pageSize: 10 }),
    ]);
    s3 = new S3Client({
      endpoint: minio.endpoint,
      region: minio.region,
      forcePathStyle: true,
      credentials: { accessKeyId: minio.accessKeyId, secretAccessKey: minio.secretAccessKey },
    });
  });
  afterAll(async () => {
    s3?.destroy();
    await api?.close();
    await env?.stop();
  });

  async function keysUnder(keyPrefix: string): Promise<string[]> {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const page = await s3.send(new ListObjectsV2Command({ Bucket: 'extract-staging', Prefix: keyPrefix, ContinuationToken: token }));
      for (const o of page.Contents ?? []) keys.push(o.Key!);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return keys;
  }

  const config = () =>
    sampleConfig(
      api,
      { method: 'response.param', responseParam: 'next_page', queryParam: 'page' },
      [
        {
          endpoint: 'users',
          dataField: 'users',
          dataType: 'users',
          children: [{ endpoint: 'users/{user-id}/orders', dataField: 'orders', dataType: 'orders', placeholders: { 'user-id': 'id' } }],
        },
      ],
      's3staged',
    );
  const extract = async (keepStaging: boolean | undefined) =>
    (await env.client.workflow.execute('extractWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: `extract-s3-${Date.now()}`,
      args: [{ config: config(), options: { fetch: FAST_FETCH, polling: { initialMs: 200, maxMs: 1000 }, keepStaging } }],
    })) as ExtractResult;
  /** Objects the run staged (pages and CSVs), as the keepStaging run found them. */
  let stagedObjects = 0;

  it('creates the staging bucket, stages every job run there and loads the tables from s3:// CSVs (keepStaging keeps them)', async () => {
    const oracle = await plainLoop(api, config());
    const result = await extract(true);

    await expectTablesLike(env, result, oracle);
    expect(result.staging).toEqual({ kept: true });
    for (const table of result.tables) expect(table.csv).toBe(`s3://extract-staging/${prefix}/${result.runKey}/csv/${table.name}.csv`);
    const staged = (await keysUnder(`${prefix}/${result.runKey}/`)).map((k) => k.slice(prefix.length + result.runKey.length + 2));
    // run 1 = the users job (3 pages, each ending a batch because it has children); runs 2..26 = one per user
    const firstRun = staged.filter((k) => k.startsWith('r0000000001/'));
    expect([...new Set(firstRun.map((k) => k.split('/')[1]))]).toEqual(['p0000000001-0000000001', 'p0000000002-0000000002', 'p0000000003-0000000003']);
    expect(new Set(firstRun.map((k) => k.split('/')[2]))).toEqual(new Set(['users.jsonl', 'users_tags.jsonl', 'users_contacts.jsonl']));
    const orderRuns = new Set(staged.filter((k) => k.endsWith('/orders.jsonl')).map((k) => k.slice(0, 11)));
    expect(orderRuns.size).toBe(makeUsers(25).filter((u) => ordersOf(u.id).length > 0).length);
    expect(staged.filter((k) => k.startsWith('csv/')).sort()).toEqual(result.tables.map((t) => `csv/${t.name}.csv`).sort());
    stagedObjects = staged.length;
  });

  it('removes the staged pages and CSVs once the tables are loaded', async () => {
    expect(stagedObjects).toBeGreaterThan(30);
    const oracle = await plainLoop(api, config());
    const result = await extract(undefined);

    await expectTablesLike(env, result, oracle);
    expect(result.staging).toEqual({ removed: stagedObjects });
    expect(await keysUnder(`${prefix}/${result.runKey}/`)).toEqual([]);
    // the keepStaging run's objects are another run's: untouched
    expect((await keysUnder(`${prefix}/`)).length).toBe(stagedObjects);
  });
});
