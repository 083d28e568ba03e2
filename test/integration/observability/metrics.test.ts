import { execFileSync, type ChildProcess } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ExportTableResult, ImportTableResult } from '../../../src/contracts/transfer';
import { startSapiTestEnv, type SapiTestEnv } from '../../harness/sapi-env';
import { ScheduleOverlapPolicy } from '@temporalio/client';
import { findTemporal } from '../../../src/dev/tools';
import { eventually, spawnTs, waitForLine } from '../../harness/processes';
import { freePort, parsePrometheusText, sumOf, type PromSample } from '../../harness/prometheus';
import { testStack } from '../../harness/stack-state';

// The test files' own process has a runtime installed already (setup-runtime.ts, no metrics), and a runtime is
// installed once per process: the worker under test runs in a child process with SAPI_METRICS_ADDRESS.
describe("the worker's Prometheus endpoint", () => {
  let env: SapiTestEnv;
  let worker: ChildProcess | undefined;
  let metricsUrl: string;

  beforeAll(async () => {
    env = await startSapiTestEnv('metrics', { worker: false });
    const port = await freePort();
    metricsUrl = `http://127.0.0.1:${port}/metrics`;
    const stack = testStack();
    worker = spawnTs('test/harness/worker-child.ts', [], {
      ...stack.env,
      TEMPORAL_TASK_QUEUE: env.taskQueue,
      SAPI_URL: env.emulator.url,
      SAPI_TOKEN: env.settings.connections.default!.token,
      SAPI_WORK_DIR: join(env.dataDir, 'work'),
      SAPI_PART_SIZE_MIB: '5',
      SAPI_METRICS_ADDRESS: `127.0.0.1:${port}`,
      SAPI_LOG_LEVEL: 'ERROR',
      // the schedules' skip counts read every second (default 60 s)
      SAPI_SCHEDULE_METRICS_INTERVAL: '1',
      SAPI_TEST_WORKFLOW_BUNDLE: stack.workflowBundlePath,
      SAPI_TEST_WORKER_IDENTITY: `metrics-worker-${process.pid}`,
    });
    await waitForLine(worker, /^READY$/, 60_000);
  });
  afterAll(async () => {
    if (worker && worker.exitCode === null) {
      const exited = new Promise((ok) => worker!.once('exit', ok));
      worker.kill('SIGTERM');
      await exited;
    }
    await env?.stop();
  });

  async function scrape(): Promise<PromSample[]> {
    const response = await fetch(metricsUrl);
    expect(response.status).toBe(200);
    return parsePrometheusText(await response.text());
  }

  it("counts the rows and bytes of an import, the bytes of an export, and serves the SDK's own metrics", async () => {
    const rows = 2_500;
    const source = join(env.dataDir, 'metrics.csv');
    writeFileSync(source, `id,name\n${Array.from({ length: rows }, (_, i) => `${i},row-${i}`).join('\n')}\n`);
    const sourceBytes = statSync(source).size;

    const imported = (await env.client.workflow.execute('importTableWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: `metrics-import-${Date.now()}`,
      args: [{ source, bucketId: 'in.c-metrics', createBucket: true, table: 'rows', polling: { initialMs: 200 } }],
    })) as ImportTableResult;
    expect(imported.importedRowsCount).toBe(rows);
    expect(imported.bytes).toBe(sourceBytes);

    const destination = join(env.dataDir, 'metrics-out.csv');
    const exported = (await env.client.workflow.execute('exportTableWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: `metrics-export-${Date.now()}`,
      args: [{ tableId: imported.tableId, destination, polling: { initialMs: 200 } }],
    })) as ExportTableResult;
    expect(readFileSync(destination).length).toBe(exported.bytes);

    const samples = await scrape();
    expect(sumOf(samples, 'sapi_rows_imported_total')).toBe(rows);
    expect(sumOf(samples, 'sapi_bytes_transferred_total', { direction: 'upload' })).toBe(sourceBytes);
    expect(sumOf(samples, 'sapi_bytes_transferred_total', { direction: 'download' })).toBe(exported.bytes);
    // our counters carry the activity's tags in the SDK's own snake_case (as on temporal_activity_… beside them)
    const uploaded = samples.find((s) => s.name === 'sapi_bytes_transferred_total' && s.labels.direction === 'upload')?.labels;
    // a small import uploads in the short path's uploadAndStartJob
    expect(uploaded).toMatchObject({ namespace: 'default', task_queue: env.taskQueue, activity_type: 'uploadAndStartJob' });
    expect(Object.keys(uploaded ?? {}).filter((label) => /[A-Z]/.test(label))).toEqual([]);
    expect(samples.find((s) => s.name === 'temporal_activity_execution_latency_count')?.labels).toMatchObject({
      task_queue: env.taskQueue,
      activity_type: expect.any(String),
    });
    // one wait per Storage job (the import's, its receipt's load and the export's), in seconds
    expect(sumOf(samples, 'sapi_job_wait_seconds_count')).toBe(3);
    expect(sumOf(samples, 'sapi_job_wait_seconds_count', { operation: 'tableExport', status: 'success' })).toBe(1);
    // the SDK's runtime metrics on the same endpoint
    expect(sumOf(samples, 'temporal_activity_execution_latency_count')).toBeGreaterThan(0);
    expect(samples.some((s) => s.name.startsWith('temporal_workflow_completed'))).toBe(true);
  });

  it('counts the runs a schedule skipped behind a slow import as sapi_schedule_runs_skipped_total, as `temporal schedule describe` counts them', async () => {
    const source = join(env.dataDir, 'scheduled.csv');
    writeFileSync(source, 'id\n1\n');
    const polling = { initialMs: 200, maxMs: 500 };
    await env.client.workflow.execute('importTableWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: `metrics-sched-table-${Date.now()}`,
      args: [{ source, bucketId: 'in.c-metrics', createBucket: true, table: 'scheduled', polling }],
    });
    // each scheduled load's Storage job runs until the test has compared the counts; due every second with overlap
    // skip: the runs due meanwhile are skipped
    env.emulator.faults.holdJob({ tableId: 'in.c-metrics.scheduled', operationName: 'tableImport' });
    const scheduleId = `metrics-skip-${Date.now()}`;
    const schedule = await env.client.schedule.create({
      scheduleId,
      spec: { intervals: [{ every: '1s' }] },
      action: {
        type: 'startWorkflow',
        workflowType: 'importTableWorkflow',
        taskQueue: env.taskQueue,
        args: [{ source, bucketId: 'in.c-metrics', table: 'scheduled', mode: 'load', incremental: true, polling }],
      },
      policies: { overlap: ScheduleOverlapPolicy.SKIP },
    });
    try {
      await eventually(async () => (await schedule.describe()).info.numActionsSkippedOverlap >= 3, 30_000, 'the schedule skipped no run');
      // paused, its counts stop growing: the worker's next reading must show exactly what the Temporal CLI shows
      await schedule.pause('metrics test: compare the counts');
      const described = JSON.parse(
        execFileSync(
          findTemporal().path,
          [
            'schedule',
            'describe',
            '--schedule-id',
            scheduleId,
            '--address',
            testStack().temporalAddress,
            '--namespace',
            testStack().namespace,
            '--output',
            'json',
          ],
          { encoding: 'utf8' },
        ),
      ) as { info: { overlapSkipped?: string | number; bufferDropped?: string | number; missedCatchupWindow?: string | number } };
      const skipped = Number(described.info.overlapSkipped ?? 0);
      expect(skipped).toBeGreaterThanOrEqual(3);
      const series = { schedule_id: scheduleId, workflow_type: 'importTableWorkflow', task_queue: env.taskQueue, namespace: testStack().namespace };
      await eventually(
        async () => sumOf(await scrape(), 'sapi_schedule_runs_skipped_total', { ...series, reason: 'overlap_skip' }) === skipped,
        15_000,
        `the worker's metric never reached the ${skipped} runs \`temporal schedule describe\` counts`,
      );
      const samples = await scrape();
      expect(sumOf(samples, 'sapi_schedule_runs_skipped_total', { ...series, reason: 'buffer_dropped' })).toBe(Number(described.info.bufferDropped ?? 0));
      expect(sumOf(samples, 'sapi_schedule_runs_skipped_total', { ...series, reason: 'missed_catchup_window' })).toBe(
        Number(described.info.missedCatchupWindow ?? 0),
      );
    } finally {
      await schedule.delete();
      env.emulator.faults.releaseJobs('tableImport');
    }
  });
});
