/**
 * Control through validated updates, as `sapi-temporal pause|resume|cancel|limit|extend-deadline` send them: a refused
 * update changes nothing and writes nothing to history; an accepted one answers the run's new state.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { createSampleApi, type SampleApi } from '../../../src/sample-api';
import type { ExtractInput, ExtractProgress, ExtractResult } from '../../../src/contracts/extract';
import type { ImportTableInput, TransferProgress } from '../../../src/contracts/transfer';
import { eventually, runCli } from '../../harness/processes';
import { startPaused } from '../../harness/start-paused';
import { startSapiTestEnv, type SapiTestEnv } from '../../harness/sapi-env';
import { testStack } from '../../harness/stack-state';
import { FAST_FETCH, sampleConfig } from '../extract/support';
import { fetchHistories, RECORD_HISTORIES_ENV, saveHistories } from '../../harness/replay';

const EventType = temporal.api.enums.v1.EventType;

describe('control through validated updates', () => {
  let env: SapiTestEnv;
  let api: SampleApi;
  let cliEnv: Record<string, string>;
  beforeAll(async () => {
    [env, api] = await Promise.all([startSapiTestEnv('updates'), createSampleApi({ records: 200, pageSize: 10 })]);
    const stack = testStack();
    cliEnv = { TEMPORAL_ADDRESS: stack.temporalAddress, TEMPORAL_NAMESPACE: stack.namespace, TEMPORAL_TASK_QUEUE: env.taskQueue };
  });
  afterAll(async () => {
    await api?.close();
    await env?.stop();
  });

  const cli = (...args: string[]) => runCli(args, cliEnv);
  const updateEvents = async (handle: WorkflowHandle) =>
    ((await handle.fetchHistory()).events ?? []).filter(
      (e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED || e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_REJECTED,
    ).length;

  it('pause, resume and limit an extraction; refused ones leave no trace; the limit stops it at that many pages, loaded', async () => {
    const config = sampleConfig(
      api,
      { method: 'response.param', responseParam: 'meta.next_cursor', queryParam: 'cursor' },
      [{ endpoint: 'cursor/items', dataType: 'users' }],
      'updates',
    );
    // the id is a saved history's name (the load children's ids derive from it)
    const workflowId = 'extract-updates-limit';
    // started paused (the pause update with the start: one accepted update), so every step below meets it where the test says
    const handle = await startPaused(env.client, {
      taskQueue: env.taskQueue,
      workflowId,
      input: { config, options: { fetch: FAST_FETCH, mode: 'page' } } satisfies ExtractInput,
    });
    await eventually(async () => (await handle.query<ExtractProgress>('progress')).phase === 'paused', 30_000, 'extraction never paused');

    const again = await cli('pause', workflowId);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`pause failed [SAPI_CLI_UPDATE_REFUSED] refused by ${workflowId}: the extraction is already paused`);
    const onImport = await cli('extend-deadline', workflowId, '--by', '1h');
    expect(onImport.stderr).toContain(`extend-deadline applies to importTableWorkflow and exportTableWorkflow runs; ${workflowId} is a extractWorkflow`);
    expect(await updateEvents(handle)).toBe(1);

    const limited = await cli('limit', workflowId, '--max-pages', '3', '-o', 'json');
    expect(limited.code).toBe(0);
    expect(JSON.parse(limited.stdout)).toMatchObject({ phase: 'paused', paused: true, pages: 0, maxPages: 3 });
    const resumed = await cli('resume', workflowId);
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toMatch(new RegExp(`^resume: ${workflowId} accepted \\(phase paused, 0 pages, max 3 pages\\)`));
    const result = (await handle.result()) as ExtractResult;
    expect(result.pages).toBe(3);
    expect(result.warnings.join('\n')).toContain('stopped at 3 pages (setLimits maxPages)');
    expect((await env.emulator.readTable('in.c-updates.users')).rows).toHaveLength(30);
    expect(await updateEvents(handle)).toBe(3);
    if (process.env[RECORD_HISTORIES_ENV]) saveHistories(await fetchHistories({ [workflowId]: handle }));

    const late = await cli('resume', workflowId);
    expect(late.code).toBe(1);
    expect(late.stderr).toContain(`resume failed [SAPI_CLI_UPDATE_REFUSED] ${workflowId} is not running (completed)`);
  });

  it("extends the deadline of an import's Storage job, refuses one in the past, and cancels another import: it ends cancelled", async () => {
    const source = join(env.dataDir, 'u.csv');
    writeFileSync(source, 'id\n1\n2\n');
    // the job runs until the run has polled it past its first deadline
    env.emulator.faults.holdJob({ operationName: 'tableCreate', times: 1 });
    const workflowId = 'import-updates-deadline';
    const handle = await env.client.workflow.start('importTableWorkflow', {
      taskQueue: env.taskQueue,
      workflowId,
      args: [
        {
          source,
          bucketId: 'in.c-updates',
          createBucket: true,
          table: 'deadline',
          polling: { initialMs: 200, maxMs: 500, deadlineMs: 10_000 },
        } satisfies ImportTableInput,
      ],
    });
    await eventually(async () => (await handle.query<TransferProgress>('progress')).deadlineAt !== undefined, 30_000, 'import never polled its job');
    const firstDeadline = (await handle.query<TransferProgress>('progress')).deadlineAt!;
    const past = await cli('extend-deadline', workflowId, '--until', '2020-01-01T00:00:00Z');
    expect(past.code).toBe(1);
    expect(past.stderr).toContain(`extend-deadline failed [SAPI_CLI_UPDATE_REFUSED] refused by ${workflowId}: until 2020-01-01T00:00:00.000Z is in the past`);
    const extended = await cli('extend-deadline', workflowId, '--by', '2m', '--json');
    expect(extended.code).toBe(0);
    expect(JSON.parse(extended.stdout).deadlineAt).toBeGreaterThan(Date.now() + 60_000);
    // the run still polls its job after the 10 s deadline (without the extension it would have ended there); then the
    // job ends and so does the import
    const job = await env.emulator.faults.jobHeld('tableCreate');
    const polledAfter = () => env.emulator.requests.some((r) => r.method === 'GET' && r.path.endsWith(`/jobs/${job.id}`) && r.time > firstDeadline + 1000);
    await eventually(polledAfter, 60_000, 'the import did not poll its job after its first deadline');
    env.emulator.faults.releaseJobs('tableCreate');
    expect(await handle.result()).toMatchObject({ importedRowsCount: 2 });
    expect(await updateEvents(handle)).toBe(1);
    if (process.env[RECORD_HISTORIES_ENV]) saveHistories(await fetchHistories({ [workflowId]: handle }));

    // the job runs until the run was cancelled
    env.emulator.faults.holdJob({ operationName: 'tableCreate', times: 1 });
    const second = await env.client.workflow.start('importTableWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: `${workflowId}-cancel`,
      args: [{ source, bucketId: 'in.c-updates', table: 'cancelled', polling: { initialMs: 200, maxMs: 500 } } satisfies ImportTableInput],
    });
    await eventually(async () => (await second.query<TransferProgress>('progress')).deadlineAt !== undefined, 30_000, 'import never polled its job');
    const cancelled = await cli('cancel', second.workflowId, '--reason', 'wrong file', '-o', 'json');
    expect(cancelled).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(cancelled.stdout)).toMatchObject({ cancelling: 'wrong file' });
    // the run ends *cancelled* (not failed), the reason recorded with the request in its history
    await expect(second.result()).rejects.toMatchObject({ cause: { name: 'CancelledFailure' } });
    expect((await second.describe()).status.name).toBe('CANCELLED');
    const requested = ((await second.fetchHistory()).events ?? []).find((e) => e.workflowExecutionCancelRequestedEventAttributes);
    expect(requested?.workflowExecutionCancelRequestedEventAttributes?.cause).toBe('wrong file');
    const again = await cli('cancel', second.workflowId);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`cancel failed [SAPI_CLI_UPDATE_REFUSED] ${second.workflowId} is not running (cancelled)`);
    env.emulator.faults.releaseJobs('tableCreate');
  });
});
