/**
 * Internal continuation state (`resume`) is not a public input: a start that carries it (as `temporal workflow
 * start --input` can) is refused with `SAPI_INPUT_FORBIDDEN` before any activity runs, whatever it names: another
 * run's file and bucket (whose clean-up would delete them), or another extraction's staging (whose pages it would
 * load, or into which it would write). The victim's table, file and bucket are untouched.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ImportTableResult } from '../../../src/contracts/transfer';
import { stagingRunKey } from '../../../src/contracts/extract-plan';
import { startSapiTestEnv, type SapiTestEnv } from '../../harness/sapi-env';
import { failureOf } from '../../harness/workflow-failure';
import { historyShape } from '../../harness/history';
import { bucketExists, listFiles } from '../../harness/matrix/checks';

describe('forged continuation state', () => {
  let env: SapiTestEnv;
  let victim: ImportTableResult;
  beforeAll(async () => {
    env = await startSapiTestEnv('forged-resume');
    const source = join(env.dataDir, 'victim.csv');
    writeFileSync(source, 'id,name\n1,a\n2,b\n');
    victim = await env.client.workflow.execute('importTableWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: `victim-${Date.now()}`,
      args: [{ source, bucketId: 'in.c-victim', createBucket: true, table: 'people', polling: { initialMs: 200 } }],
    });
  });
  afterAll(async () => {
    await env?.stop();
  });

  const forged = async (type: string, input: object) => {
    const handle = await env.client.workflow.start(type, { taskQueue: env.taskQueue, workflowId: `forged-${type}-${Date.now()}`, args: [input] });
    const failure = await failureOf(handle.result());
    return { failure, activities: historyShape((await handle.fetchHistory()).events ?? []).activityTypes };
  };

  it("refuses an import whose resume names the victim's file and bucket; the victim keeps its table, file and bucket", async () => {
    const { failure, activities } = await forged('importTableWorkflow', {
      source: join(env.dataDir, 'absent.csv'),
      bucketId: 'in.c-victim',
      table: 'people',
      resume: {
        fileId: victim.fileId,
        bytes: 1,
        job: { id: 999_999, status: 'error', error: { message: 'forged' } },
        pollingSince: 0,
        createdBucket: true,
        createdTable: true,
      },
    });
    expect(failure.type).toBe('SAPI_INPUT_FORBIDDEN');
    expect(failure.message).toContain('input field resume');
    expect(activities).toEqual([]);
    expect((await env.emulator.readTable('in.c-victim.people')).rows).toHaveLength(2);
    expect(await bucketExists(env.emulator, 'in.c-victim')).toBe(true);
    expect((await listFiles(env.emulator)).map((f) => f.id)).toContain(victim.fileId);
  });

  it("refuses an export and an extraction started with a resume (an extraction naming another run's staging)", async () => {
    const exported = await forged('exportTableWorkflow', {
      tableId: 'in.c-victim.people',
      destination: join(env.dataDir, 'out.csv'),
      resume: { job: { id: 1, status: 'success' }, pollingSince: 0 },
    });
    expect(exported.failure.type).toBe('SAPI_INPUT_FORBIDDEN');
    expect(exported.activities).toEqual([]);
    const runKey = stagingRunKey('victim-extraction', 'a-run-id');
    const extracted = await forged('extractWorkflow', {
      config: { parameters: { api: { baseUrl: 'http://127.0.0.1:9/' }, config: { jobs: [{ endpoint: 'x' }] } } },
      options: { load: false },
      resume: {
        v: 1,
        runKey,
        runId: 'a-run-id',
        runs: 2,
        nextJob: 0,
        nextRunNo: 1,
        frames: [],
        schema: {},
        rows: {},
        pages: 0,
        records: 0,
        bytes: 0,
        warnings: [],
        warningsDropped: 0,
        stopReasons: {},
        paused: false,
      },
    });
    expect(extracted.failure.type).toBe('SAPI_INPUT_FORBIDDEN');
    expect(extracted.activities).toEqual([]);
  });
});
