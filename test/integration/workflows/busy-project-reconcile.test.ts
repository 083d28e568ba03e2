/**
 * A lost `tables-async` / `import-async` answer in a busy project: the service performed the POST, the answer never
 * arrived, and 5,000 other jobs were created before the activity looked for its job. The job is found however deep
 * it lies in the job list: one job, the rows once, no false failure.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import type { ImportTableInput, ImportTableResult } from '../../../src/contracts/transfer';
import { loadSettings } from '../../../src/config';
import { startWorker } from '../../../src/worker';
import { startHoldProxy, type HoldProxy } from '../../harness/hold-proxy';
import { startSapiTestEnv, type SapiTestEnv } from '../../harness/sapi-env';
import { testStack } from '../../harness/stack-state';

const OTHER_JOBS = 5_000;

describe('reconciling a lost job answer in a project with 5,000 other jobs', () => {
  let env: SapiTestEnv;
  let proxy: HoldProxy;
  let n = 0;

  beforeAll(async () => {
    env = await startSapiTestEnv('busy-project', { worker: false, emulator: { requestLogLimit: 100_000 } });
    // the worker reaches the Storage API through a proxy that can hold its first job lookup back
    proxy = await startHoldProxy(env.emulator.url);
    const stack = testStack();
    const settings = loadSettings({
      ...stack.env,
      TEMPORAL_TASK_QUEUE: env.taskQueue,
      SAPI_URL: proxy.url,
      SAPI_TOKEN: env.emulator.token,
      SAPI_WORK_DIR: join(env.dataDir, 'work'),
      SAPI_PART_SIZE_MIB: '5',
    });
    env.worker = await startWorker({ settings, worker: { workflowBundle: { code: readFileSync(stack.workflowBundlePath, 'utf8') } } });
    await api('POST', '/v2/storage/buckets', { name: 'busy', stage: 'in' });
  });
  afterAll(async () => {
    await env?.stop();
    await proxy?.close();
  });

  /** A Storage API call straight to the emulator (not through the worker's proxy). */
  async function api(method: 'GET' | 'POST', path: string, body?: unknown): Promise<unknown> {
    const res = await request(`${env.emulator.url}${path}`, {
      method,
      headers: { 'x-storageapi-token': env.emulator.token, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const answer = await res.body.json();
    if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${JSON.stringify(answer)}`);
    return answer;
  }

  /** `count` other jobs, as another busy client makes them: typed-table definitions of other tables (failed cheaply). */
  async function createOtherJobs(count: number): Promise<void> {
    env.emulator.faults.failJob({ operationName: 'tableDefinitionCreate', message: "another client's job", times: count });
    let next = 0;
    const one = async (): Promise<void> => {
      while (next < count) {
        const i = next++;
        await api('POST', '/v2/storage/buckets/in.c-busy/tables-definition', {
          name: `other_${n}_${i}`,
          columns: [{ name: 'id', definition: { type: 'VARCHAR' } }],
        });
      }
    };
    await Promise.all(Array.from({ length: 16 }, one));
  }

  /** Every job of the project whose operation and table match, walking the whole list. */
  async function jobsOf(operationName: string, tableId: string): Promise<{ id: number; operationParams: Record<string, unknown> }[]> {
    const found: { id: number; operationName: string; tableId: string | null; operationParams: Record<string, unknown> }[] = [];
    for (let offset = 0; ; offset += 1000) {
      const page = (await api('GET', `/v2/storage/jobs?limit=1000&offset=${offset}`)) as typeof found;
      found.push(...page.filter((j) => j.operationName === operationName && j.tableId === tableId));
      if (page.length < 1000) return found;
    }
  }

  /**
   * Runs an import whose `POST <path>` is performed but its answer dropped; while the activity's first look for its
   * job is held, `OTHER_JOBS` other jobs are created (all newer than the lost one).
   */
  async function runWithLostAnswer(postPath: RegExp, input: ImportTableInput): Promise<ImportTableResult> {
    env.emulator.faults.add({ method: 'POST', path: postPath, times: 1, action: { type: 'dropResponse' } });
    const lookup = proxy.holdNext((method, path) => method === 'GET' && /^\/v2\/storage\/jobs(\?|$)/.test(path));
    const result = env.client.workflow.execute('importTableWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: `busy-import-${Date.now()}-${++n}`,
      args: [{ polling: { initialMs: 200, maxMs: 1000 }, ...input }],
    });
    await Promise.race([lookup.arrived, result]);
    await createOtherJobs(OTHER_JOBS);
    lookup.release();
    return result;
  }

  function csvFile(name: string, content: string): string {
    const path = join(env.dataDir, name);
    writeFileSync(path, content);
    return path;
  }

  it('a lost tables-async answer: one tableCreate job, the table with its rows, COMPLETED', async () => {
    const before = env.emulator.requests.length;
    const result = await runWithLostAnswer(/\/tables-async$/, {
      source: csvFile('create.csv', 'k,v\n1,a\n2,b\n3,c\n'),
      bucketId: 'in.c-busy',
      table: 'created',
    });
    const seen = env.emulator.requests.slice(before);
    expect(result).toMatchObject({ tableId: 'in.c-busy.created', importedRowsCount: 3 });
    expect((await env.emulator.readTable('in.c-busy.created')).rows).toEqual([
      ['1', 'a'],
      ['2', 'b'],
      ['3', 'c'],
    ]);
    expect(await jobsOf('tableCreate', 'in.c-busy.created')).toHaveLength(1);
    expect(seen.filter((r) => r.method === 'POST' && r.path.endsWith('/tables-async') && r.path.includes('/in.c-busy/'))).toHaveLength(1); // (the receipt's own load aside)
    // the lookup walked back past the other jobs, page by page (more pages than any fixed budget of 1,000 jobs)
    expect(seen.filter((r) => r.method === 'GET' && r.path === '/v2/storage/jobs').length).toBeGreaterThan(OTHER_JOBS / 100);
  }, 600_000);

  it('a lost import-async answer: one tableImport job, the rows loaded once, COMPLETED', async () => {
    await env.client.workflow.execute('importTableWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: `busy-create-${Date.now()}`,
      // no primary key: a second load of the same file would append its rows again, not upsert them
      args: [{ source: csvFile('base.csv', 'k,v\n1,a\n2,b\n'), bucketId: 'in.c-busy', table: 'loaded', polling: { initialMs: 200, maxMs: 1000 } }],
    });
    const before = env.emulator.requests.length;
    const result = await runWithLostAnswer(/\/import-async$/, {
      source: csvFile('more.csv', 'k,v\n3,c\n4,d\n'),
      bucketId: 'in.c-busy',
      table: 'loaded',
      mode: 'load',
      incremental: true,
    });
    const seen = env.emulator.requests.slice(before);
    expect(result).toMatchObject({ tableId: 'in.c-busy.loaded', importedRowsCount: 2 });
    expect((await env.emulator.readTable('in.c-busy.loaded')).rows).toEqual([
      ['1', 'a'],
      ['2', 'b'],
      ['3', 'c'],
      ['4', 'd'],
    ]);
    expect(await jobsOf('tableImport', 'in.c-busy.loaded')).toHaveLength(1);
    expect(seen.filter((r) => r.method === 'POST' && r.path.endsWith('/import-async') && r.path.includes('/in.c-busy.'))).toHaveLength(1);
    expect(seen.filter((r) => r.method === 'GET' && r.path === '/v2/storage/jobs').length).toBeGreaterThan(OTHER_JOBS / 100);
  }, 600_000);
});
