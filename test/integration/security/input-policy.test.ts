/**
 * The worker's input policy, attacked as someone who can only start workflows (issue 22): a worker configured as in
 * production (local paths under one root, no private networks, an allow-listed API, one object prefix, a bound
 * secret) refuses every attack with `SAPI_INPUT_FORBIDDEN` before anything is read, written, fetched or created:
 * listeners count the requests they get, files on disk keep their bytes, Storage keeps its buckets and files.
 * The same kinds of inputs inside the allowed roots, URLs and prefixes still work.
 */
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { type ApplicationFailure } from '@temporalio/common';
import { request } from 'undici';
import type { ExportTableInput, ImportTableInput } from '../../../src/contracts/transfer';
import type { ExtractInput } from '../../../src/contracts/extract';
import { startSapiTestEnv, type SapiTestEnv } from '../../harness/sapi-env';
import { failureOf as workflowFailure } from '../../harness/workflow-failure';
import { testStack } from '../../harness/stack-state';

/** A local HTTP server that counts what reaches it. */
interface Listener {
  url: string;
  port: number;
  hits: string[];
  server: Server;
}

/** What a listener answers. */
interface Answer {
  status: number;
  body?: string;
  headers?: Record<string, string>;
}

async function listen(handler: (path: string) => Answer): Promise<Listener> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    const answer = handler(req.url ?? '/');
    res.writeHead(answer.status, answer.headers ?? { 'content-type': 'text/csv' });
    res.end(answer.body ?? '');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return { url: `http://127.0.0.1:${port}`, port, hits, server };
}

const SECRET = 'policy-secret-value-0f3a9c';
const SECRET_NAME = 'SAPI_SECRET_POLICY_CRM';

describe('the input policy of a worker configured as in production', () => {
  let env: SapiTestEnv;
  let root: string;
  let outside: string;
  let allowed: Listener;
  let attacker: Listener;
  let s3: S3Client;
  const userBucket = `policy-user-${Date.now().toString(36)}`;
  /** The emulator's file bucket: allowed by the prefixes on purpose, and refused all the same (the Storage service's own). */
  const filesBucket = `policy-files-${Date.now().toString(36)}`;
  let n = 0;

  beforeAll(async () => {
    const { minio, dataDir } = testStack();
    const base = mkdtempSync(join(dataDir, 'policy-'));
    root = join(base, 'allowed');
    outside = join(base, 'worker-home');
    mkdirSync(root);
    mkdirSync(outside);
    // the worker's own secrets file, outside the root
    writeFileSync(join(outside, '.env'), 'SAPI_TOKEN=the-worker-token\nSAPI_ADMIN=the-admin-token\n');
    allowed = await listen((path): Answer =>
      path.startsWith('/redirect')
        ? { status: 302, headers: { location: `http://127.0.0.1:${attacker.port}/stolen.csv` } }
        : path.startsWith('/api/')
          ? { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ items: [{ id: 1 }] }) }
          : { status: 200, body: 'id,name\n1,allowed\n' },
    );
    attacker = await listen(() => ({ status: 200, body: 'line\nsecret internal data\n' }));
    s3 = new S3Client({
      endpoint: minio.endpoint,
      region: minio.region,
      forcePathStyle: true,
      credentials: { accessKeyId: minio.accessKeyId, secretAccessKey: minio.secretAccessKey },
    });
    await s3.send(new CreateBucketCommand({ Bucket: userBucket }));
    await s3.send(new PutObjectCommand({ Bucket: userBucket, Key: 'allowed/in.csv', Body: 'id,name\n1,from-s3\n' }));
    await s3.send(new PutObjectCommand({ Bucket: userBucket, Key: 'private/other.csv', Body: 'id,name\n1,private\n' }));
    process.env[SECRET_NAME] = SECRET;
    process.env[`${SECRET_NAME}_HOSTS`] = 'api.crm.example';
    env = await startSapiTestEnv('policy', {
      emulator: { s3: { ...minio, bucket: filesBucket } },
      env: {
        AWS_ACCESS_KEY_ID: minio.accessKeyId,
        AWS_SECRET_ACCESS_KEY: minio.secretAccessKey,
        AWS_ENDPOINT_URL_S3: minio.endpoint,
        AWS_REGION: minio.region,
        SAPI_LOCAL_ROOTS: root,
        SAPI_ALLOWED_NETWORKS: '',
        SAPI_ALLOWED_URLS: `${allowed.url}/`,
        SAPI_ALLOWED_OBJECT_PREFIXES: `s3://${userBucket}/allowed/,s3://${filesBucket}/`,
      },
    });
  });
  afterAll(async () => {
    delete process.env[SECRET_NAME];
    delete process.env[`${SECRET_NAME}_HOSTS`];
    s3?.destroy();
    await Promise.all([allowed, attacker].map((l) => l && new Promise((resolve) => l.server.close(resolve))));
    await env?.stop();
  });
  beforeEach(() => {
    allowed.hits.length = 0;
    attacker.hits.length = 0;
  });

  const importRun = (input: Partial<ImportTableInput>) =>
    env.client.workflow.execute('importTableWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: `policy-import-${Date.now()}-${++n}`,
      args: [{ bucketId: 'in.c-policy', createBucket: true, table: `t${n}`, polling: { initialMs: 200, maxMs: 1000 }, ...input } as ImportTableInput],
    });
  const exportRun = (input: Partial<ExportTableInput>) =>
    env.client.workflow.execute('exportTableWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: `policy-export-${Date.now()}-${++n}`,
      args: [{ polling: { initialMs: 200, maxMs: 1000 }, ...input } as ExportTableInput],
    });

  /** What Storage holds: buckets and files (a refused run must leave both as they were). */
  async function storageState(): Promise<{ buckets: string[]; files: number }> {
    const get = async (path: string) =>
      (await (await request(`${env.emulator.url}/v2/storage/${path}`, { headers: { 'x-storageapi-token': env.emulator.token } })).body.json()) as Array<{
        id: string | number;
      }>;
    return { buckets: (await get('buckets')).map((b) => String(b.id)).sort(), files: (await get('files?limit=1000')).length };
  }

  /** Runs an attack: it must fail with SAPI_INPUT_FORBIDDEN naming `field`, leave Storage as it was, and not echo `secretText`. */
  async function refused(run: Promise<unknown>, field: string, secretText?: string): Promise<ApplicationFailure> {
    const before = await storageState();
    const failure = await workflowFailure(run);
    expect(failure.type).toBe('SAPI_INPUT_FORBIDDEN');
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain(field);
    if (secretText) expect(failure.message).not.toContain(secretText);
    expect(await storageState()).toEqual(before);
    return failure;
  }

  describe('local paths', () => {
    it("refuses to import the worker's .env (outside the roots) as a one-column table", async () => {
      await refused(importRun({ source: join(outside, '.env'), columns: ['line'], csv: { delimiter: '\t' } }), 'source', 'the-worker-token');
    });

    it('refuses /etc/passwd as a plain source without echoing its first line', async () => {
      await refused(importRun({ source: '/etc/passwd' }), 'source', 'root:');
    });

    it('refuses /etc/passwd as a slice of a headerless sliced import', async () => {
      writeFileSync(join(root, 'part1.csv'), '1,a\n');
      await refused(importRun({ source: join(root, 'part1.csv'), slices: [join(root, 'part1.csv'), '/etc/passwd'], columns: ['id', 'name'] }), 'slices[1]');
    });

    it('refuses /proc/self/environ, a ../ escape and a symlink out of the root', async () => {
      await refused(importRun({ source: '/proc/self/environ', columns: ['line'] }), 'source');
      await refused(importRun({ source: `${root}/../worker-home/.env`, columns: ['line'] }), 'source', 'the-worker-token');
      symlinkSync(join(outside, '.env'), join(root, 'innocent.csv'));
      await refused(importRun({ source: join(root, 'innocent.csv'), columns: ['line'] }), 'source', 'the-worker-token');
    });

    it('imports a CSV under the root', async () => {
      writeFileSync(join(root, 'ok.csv'), 'id,name\n1,alpha\n2,beta\n');
      const result = (await importRun({ source: join(root, 'ok.csv'), table: 'local_ok' })) as { importedRowsCount: number };
      expect(result.importedRowsCount).toBe(2);
      expect((await env.emulator.readTable('in.c-policy.local_ok')).rows).toEqual([
        ['1', 'alpha'],
        ['2', 'beta'],
      ]);
    });

    it('refuses an export outside the roots or over an existing file, before the export starts; writes one under the root, and overwrites only when asked', async () => {
      const target = join(outside, 'owned-by-worker.txt');
      writeFileSync(target, 'keep me\n');
      await refused(exportRun({ tableId: 'in.c-policy.local_ok', destination: target, overwrite: true }), 'destination');
      expect(readFileSync(target, 'utf8')).toBe('keep me\n');
      await refused(exportRun({ tableId: 'in.c-policy.local_ok', destination: join(outside, 'new.csv') }), 'destination');
      expect(existsSync(join(outside, 'new.csv'))).toBe(false);

      const inside = join(root, 'export.csv');
      writeFileSync(inside, 'precious\n');
      await refused(exportRun({ tableId: 'in.c-policy.local_ok', destination: inside }), 'destination');
      expect(readFileSync(inside, 'utf8')).toBe('precious\n');
      await exportRun({ tableId: 'in.c-policy.local_ok', destination: inside, overwrite: true });
      const exported = readFileSync(inside, 'utf8');
      expect(exported).toMatch(/alpha/);
      expect(exported).toMatch(/beta/);
      expect(exported).not.toMatch(/precious/);
      await exportRun({ tableId: 'in.c-policy.local_ok', destination: join(root, 'sub', 'fresh.csv') });
      expect(existsSync(join(root, 'sub', 'fresh.csv'))).toBe(true);
    });
  });

  describe('URLs', () => {
    it("refuses loopback services (Temporal's HTTP API, the emulator's index, any local listener) with no request reaching them", async () => {
      const { env: stackEnv } = testStack();
      const temporalHttp = stackEnv.SAPI_INTERNAL_URLS!.split(',')[0]!;
      await refused(importRun({ source: `${temporalHttp}/api/v1/namespaces/default/workflows`, columns: ['line'] }), 'source');
      await refused(importRun({ source: `${env.emulator.url}/v2/storage`, columns: ['line'] }), 'source');
      await refused(importRun({ source: `${attacker.url}/data.csv` }), 'source', 'secret internal data');
      await refused(importRun({ source: `http://localhost:${attacker.port}/data.csv` }), 'source');
      expect(attacker.hits).toEqual([]);
    });

    it('refuses a redirect from an allowed URL to a refused one, which never gets a request', async () => {
      await refused(importRun({ source: `${allowed.url}/redirect.csv` }), 'source', 'secret internal data');
      expect(allowed.hits.length).toBeGreaterThan(0);
      expect(attacker.hits).toEqual([]);
    });

    it('refuses cloud metadata and private addresses', async () => {
      await refused(importRun({ source: 'http://169.254.169.254/latest/meta-data/', columns: ['line'] }), 'source');
      await refused(importRun({ source: 'http://10.0.0.1/x.csv', columns: ['line'] }), 'source');
    });

    it('imports from an allowed URL', async () => {
      const result = (await importRun({ source: `${allowed.url}/data.csv`, table: 'url_ok' })) as { importedRowsCount: number };
      expect(result.importedRowsCount).toBe(1);
      expect((await env.emulator.readTable('in.c-policy.url_ok')).rows).toEqual([['1', 'allowed']]);
    });
  });

  describe('extraction', () => {
    const extract = (config: unknown) =>
      env.client.workflow.execute('extractWorkflow', {
        taskQueue: env.taskQueue,
        workflowId: `policy-extract-${Date.now()}-${++n}`,
        args: [{ config, options: { polling: { initialMs: 200, maxMs: 1000 }, mode: 'page' } } as ExtractInput],
      });
    const config = (baseUrl: string, headers: Record<string, string> = {}) => ({
      parameters: {
        api: { baseUrl, http: { headers } },
        config: { outputBucket: 'policy-ex', jobs: [{ endpoint: 'api/items', dataField: 'items', dataType: 'items' }] },
      },
    });

    it("refuses a baseUrl at Temporal's HTTP API or a local listener before any request", async () => {
      const temporalHttp = testStack().env.SAPI_INTERNAL_URLS!.split(',')[0]!;
      await refused(extract(config(`${temporalHttp}/api/v1/namespaces/default/`)), 'api.baseUrl');
      await refused(extract(config(`${attacker.url}/`)), 'api.baseUrl');
      expect(attacker.hits).toEqual([]);
    });

    it('refuses to send a bound secret to a host its _HOSTS does not name (allowed URL or not), before the request', async () => {
      await refused(extract(config(`${allowed.url}/`, { 'X-Api-Key': `\${env:${SECRET_NAME}}` })), SECRET_NAME, SECRET);
      expect(allowed.hits).toEqual([]);
    });

    it('extracts from an allowed API', async () => {
      const result = (await extract(config(`${allowed.url}/`))) as { tables: Array<{ rows: number }> };
      expect(result.tables.map((t) => t.rows)).toEqual([1]);
      expect(allowed.hits).toEqual(['GET /api/items']);
    });
  });

  describe("s3:// with the worker's own keys", () => {
    it("refuses an object outside the allowed prefixes and the Storage service's own file", async () => {
      await refused(importRun({ source: `s3://${userBucket}/private/other.csv` }), 'source', 'private');
      await refused(importRun({ source: `s3://${userBucket}/allowed/../private/other.csv` }), 'source');
      const files = (await (
        await request(`${env.emulator.url}/v2/storage/files?limit=1&federationToken=1`, { headers: { 'x-storageapi-token': env.emulator.token } })
      ).body.json()) as Array<{ id: number }>;
      const detail = (await (
        await request(`${env.emulator.url}/v2/storage/files/${files[0]!.id}?federationToken=1`, { headers: { 'x-storageapi-token': env.emulator.token } })
      ).body.json()) as { s3Path?: { bucket: string; key: string } };
      expect(detail.s3Path!.bucket).toBe(filesBucket);
      const storageObject = `s3://${detail.s3Path!.bucket}/${detail.s3Path!.key}`;
      await refused(importRun({ source: storageObject }), 'source');
      await refused(exportRun({ tableId: 'in.c-policy.local_ok', destination: storageObject }), 'destination');
      await refused(exportRun({ tableId: 'in.c-policy.local_ok', destination: `s3://${userBucket}/private/other.csv` }), 'destination');
      const kept = await s3.send(new GetObjectCommand({ Bucket: userBucket, Key: 'private/other.csv' }));
      expect(await kept.Body!.transformToString()).toBe('id,name\n1,private\n');
    });

    it('imports from and exports to an allowed prefix', async () => {
      const result = (await importRun({ source: `s3://${userBucket}/allowed/in.csv`, table: 's3_ok' })) as { importedRowsCount: number };
      expect(result.importedRowsCount).toBe(1);
      await exportRun({ tableId: 'in.c-policy.s3_ok', destination: `s3://${userBucket}/allowed/out.csv` });
      const out = await s3.send(new GetObjectCommand({ Bucket: userBucket, Key: 'allowed/out.csv' }));
      expect(await out.Body!.transformToString()).toContain('from-s3');
    });
  });

  describe('backfills (their children meet the same policy)', () => {
    const backfill = (input: Record<string, unknown>) =>
      env.client.workflow.execute('backfillWorkflow', { taskQueue: env.taskQueue, workflowId: `policy-backfill-${Date.now()}-${++n}`, args: [input] });

    /** A backfill whose windows name what the policy refuses: it fails naming the windows, each refused with SAPI_INPUT_FORBIDDEN. */
    async function refusedBackfill(run: Promise<unknown>, windows: number, field: string, secretText: string): Promise<void> {
      const before = await storageState();
      const failure = await workflowFailure(run);
      expect(failure.type).toBe('SAPI_BACKFILL_WINDOW_FAILED');
      expect(failure.message).toContain(`${windows} window(s) failed`);
      // each window names the refusal as the child's activity raised it
      expect(failure.message.match(/: SAPI_INPUT_FORBIDDEN: /g)).toHaveLength(windows);
      expect(failure.message).toContain(field);
      expect(failure.message).not.toContain(secretText);
      const details = failure.details as Array<{ window: string; error: string }>;
      expect(details).toHaveLength(windows);
      expect(await storageState()).toEqual(before);
    }

    it("refuses import windows naming the worker's .env and /etc/passwd: nothing loaded, nothing echoed", async () => {
      writeFileSync(join(root, 'bf.csv'), 'id,name\n1,ok\n');
      await importRun({ source: join(root, 'bf.csv'), table: 'bf_target' });
      await refusedBackfill(
        backfill({
          kind: 'import',
          import: { bucketId: 'in.c-policy', table: 'bf_target', mode: 'load', incremental: true },
          sources: [join(outside, '.env'), '/etc/passwd'],
        }),
        2,
        'source',
        'the-worker-token',
      );
      expect((await env.emulator.readTable('in.c-policy.bf_target')).rows).toEqual([['1', 'ok']]);
    });

    it('refuses extraction windows whose API is a local listener, before any request', async () => {
      await refusedBackfill(
        backfill({
          kind: 'extract',
          from: '2025-01-01',
          to: '2025-01-03',
          window: 'P1D',
          extract: {
            config: {
              parameters: {
                api: { baseUrl: `${attacker.url}/` },
                config: { outputBucket: 'policy-bf', jobs: [{ endpoint: 'api/items', dataField: 'items', dataType: 'items' }] },
              },
            },
            options: { polling: { initialMs: 200, maxMs: 1000 }, incremental: true },
          },
        }),
        1, // the first window runs alone (it may create the tables); the others were not started
        'api.baseUrl',
        'secret internal data',
      );
      expect(attacker.hits).toEqual([]);
    });
  });
});
