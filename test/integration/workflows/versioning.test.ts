/**
 * Worker Deployment Versioning on the dev server: build A runs a slow import and a long extraction; build B becomes
 * current; the import finishes on A (pinned), the extraction continues as new on B from its checkpoint, every row
 * once.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { createSampleApi, type SampleApi } from '../../../src/sample-api';
import { startWorker, type RunningWorker } from '../../../src/worker';
import type { ExtractInput, ExtractProgress, ExtractResult } from '../../../src/contracts/extract';
import type { ImportTableInput, TransferProgress } from '../../../src/contracts/transfer';
import { eventually } from '../../harness/processes';
import { startPaused } from '../../harness/start-paused';
import { startSapiTestEnv, type SapiTestEnv } from '../../harness/sapi-env';
import { testStack } from '../../harness/stack-state';
import { FAST_FETCH, sampleConfig } from '../extract/support';
import { readFileSync } from 'node:fs';
import { RECORD_HISTORIES_ENV, saveHistories } from '../../harness/replay';

const EventType = temporal.api.enums.v1.EventType;

describe('worker deployment versioning', () => {
  let env: SapiTestEnv;
  let api: SampleApi;
  const workers: RunningWorker[] = [];
  const deploymentName = `sapi-test-${Date.now().toString(36)}`;
  beforeAll(async () => {
    [env, api] = await Promise.all([startSapiTestEnv('versioning', { worker: false }), createSampleApi({ records: 400, pageSize: 10 })]);
  });
  afterAll(async () => {
    for (const worker of workers) await worker.stop().catch(() => undefined);
    await api?.close();
    await env?.stop();
  });

  const bundle = () => ({ code: readFileSync(testStack().workflowBundlePath, 'utf8') });
  /** A worker of this env's queue polling as `<deploymentName>:<buildId>`. */
  async function versionedWorker(buildId: string): Promise<RunningWorker> {
    const settings = { ...env.settings, deployment: { name: deploymentName, buildId } };
    const worker = await startWorker({ settings, worker: { workflowBundle: bundle() }, checkConnections: false, stopSignals: false });
    workers.push(worker);
    return worker;
  }
  /** Makes `buildId` the deployment's current version (once the server has seen its pollers). */
  async function setCurrent(buildId: string): Promise<void> {
    await eventually(
      async () => {
        try {
          await env.client.workflowService.setWorkerDeploymentCurrentVersion({
            namespace: testStack().namespace,
            deploymentName,
            buildId,
            identity: 'versioning test',
          });
          return true;
        } catch {
          return false;
        }
      },
      30_000,
      `version ${buildId} never became current`,
    );
  }
  /** The build ids that completed the run's workflow tasks, in order, without repeats. */
  async function builds(handle: WorkflowHandle): Promise<string[]> {
    const events = (await handle.fetchHistory()).events ?? [];
    const ids = events
      .filter((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED)
      .map((e) => e.workflowTaskCompletedEventAttributes?.deploymentVersion?.buildId ?? '');
    return ids.filter((id, i) => id !== ids[i - 1]);
  }

  it('finishes an import on the build that started it and moves an extraction to the new build at a continue-as-new', async () => {
    await versionedWorker('build-a');
    await setCurrent('build-a');

    const source = join(env.dataDir, 'v.csv');
    writeFileSync(source, 'id\n1\n2\n3\n');
    // the import's job runs until build B is current (the import stays on A)
    env.emulator.faults.holdJob({ operationName: 'tableCreate', times: 1 });
    const importing = await env.client.workflow.start('importTableWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: `versioned-import-${Date.now()}`,
      args: [{ source, bucketId: 'in.c-versioning', createBucket: true, table: 'pinned', polling: { initialMs: 200, maxMs: 500 } } satisfies ImportTableInput],
    });
    const config = sampleConfig(
      api,
      { method: 'response.param', responseParam: 'meta.next_cursor', queryParam: 'cursor' },
      [{ endpoint: 'cursor/items', dataType: 'users' }],
      'versioning',
    );
    // paused from the start: it has fetched nothing when build B becomes current, and moves when resumed
    const extracting = await startPaused(env.client, {
      taskQueue: env.taskQueue,
      workflowId: 'extract-versioned-upgrade',
      input: { config, options: { fetch: FAST_FETCH, mode: 'page', batchPages: 2 } } satisfies ExtractInput,
    });
    await eventually(async () => (await extracting.query<ExtractProgress>('progress')).phase === 'paused', 30_000, 'extraction never paused');
    await eventually(async () => (await importing.query<TransferProgress>('progress')).jobId !== undefined, 30_000, 'import never started its job');

    await versionedWorker('build-b');
    await setCurrent('build-b');
    await extracting.executeUpdate('resume');
    env.emulator.faults.releaseJobs('tableCreate');

    const imported = await importing.result();
    expect(imported).toMatchObject({ importedRowsCount: 3 });
    expect(await builds(importing)).toEqual(['build-a']);

    const result = (await extracting.result()) as ExtractResult;
    const rows = (await env.emulator.readTable('in.c-versioning.users')).rows;
    expect(result.records).toBe(400);
    expect(rows).toHaveLength(400);
    expect(new Set(rows.map((r) => r[0])).size).toBe(400);
    // the first run stayed on A (paused there), the run it continued as is on B
    const first = env.client.workflow.getHandle(extracting.workflowId, extracting.firstExecutionRunId);
    expect(await builds(first)).toEqual(['build-a']);
    // the unit tier replays the run that continued as new onto the new version
    if (process.env[RECORD_HISTORIES_ENV]) saveHistories([{ workflowId: extracting.workflowId, history: await first.fetchHistory() }]);
    expect(await builds(env.client.workflow.getHandle(extracting.workflowId))).toEqual(['build-b']);
  });
});
