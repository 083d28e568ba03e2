/**
 * The short path's first activity (`prepareImport`) retried after it created the bucket: the retry recognises the
 * bucket as its own (its description names the activity's marker), so a run that fails later removes it again
 * instead of leaving an empty bucket behind.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startSapiTestEnv, type SapiTestEnv } from '../../harness/sapi-env';
import { failureOf } from '../../harness/workflow-failure';
import { bucketExists } from '../../harness/matrix/checks';

describe('a retried prepareImport that created the bucket', () => {
  let env: SapiTestEnv;
  beforeAll(async () => (env = await startSapiTestEnv('prepare-retry')));
  afterAll(() => env?.stop());

  it('counts the bucket as created: the failed run removes it', async () => {
    const source = join(env.dataDir, 'bad.csv');
    writeFileSync(source, 'id,v\n1\n');
    // the first attempt creates the bucket, then files/prepare keeps failing (every in-process try) and the attempt fails
    env.emulator.faults.add({ method: 'POST', path: '/files/prepare$', untilMs: 15_000, action: { type: 'status', status: 503 } });
    env.emulator.faults.failJob({ operationName: 'tableCreate', message: 'broken file' });
    const handle = await env.client.workflow.start('importTableWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: `prepare-retry-${Date.now()}`,
      args: [{ source, bucketId: 'in.c-prepare-retry', createBucket: true, table: 't', polling: { initialMs: 200 } }],
    });
    const failure = await failureOf(handle.result());
    expect(failure.type).toBe('SAPI_JOB_FAILED');
    const events = (await handle.fetchHistory()).events ?? [];
    expect(events.some((e) => (e.activityTaskStartedEventAttributes?.attempt ?? 1) > 1)).toBe(true);
    expect(await bucketExists(env.emulator, 'in.c-prepare-retry')).toBe(false);
  });
});
