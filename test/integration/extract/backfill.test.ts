/**
 * A backfill on the real stack: `sapi-temporal backfill extract` starts backfillWorkflow over 12 daily windows of the
 * sample API's dated events (`GET /events?from&to`); while windows run its worker process is SIGKILLed and the
 * Temporal server killed and restarted on its data, a new worker takes over, and every window's rows are in the table
 * exactly once, row by row; the live run state of the configuration (stored by a live run before) is untouched. A
 * Temporal dev server of this file's own (the restart must not reach other test files), the emulator, worker
 * processes sharing one staging folder.
 */
import { type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { startTemporal, type TemporalHandle } from '../../../src/dev/temporal';
import { restartTemporal } from '../../harness/temporal-restart';
import { createSampleApi, datedEvents, type SampleApi } from '../../../src/sample-api';
import type { BackfillProgress, BackfillResult } from '../../../src/contracts/backfill';
import type { ExtractResult } from '../../../src/contracts/extract';
import { eventually, runCli, spawnTs, waitForLine } from '../../harness/processes';
import { startSapiTestEnv, type SapiTestEnv } from '../../harness/sapi-env';
import { testStack } from '../../harness/stack-state';
import { startGate } from '../../harness/api-gate';

// the next page repeats the window's params (includeParams), as the API needs them on every page
const PAGINATION = { method: 'response.param', responseParam: 'next_page', queryParam: 'page', includeParams: true };

describe('backfill of an extraction on the real stack', () => {
  let env: SapiTestEnv;
  let api: SampleApi;
  let temporal: TemporalHandle;
  let connection: Connection;
  let client: Client;
  const workers: ChildProcess[] = [];
  const temporalDir = () => join(env.dataDir, 'own-temporal');

  beforeAll(async () => {
    [env, api] = await Promise.all([startSapiTestEnv('backfill', { worker: false }), createSampleApi({ pageSize: 10, eventsPerDay: 25, logRequests: false })]);
    temporal = await startTemporal({ dataDir: temporalDir(), headless: true });
    connection = await Connection.connect({ address: temporal.address });
    client = new Client({ connection, namespace: temporal.namespace });
  });
  afterEach(() => {
    for (const worker of workers.splice(0)) worker.kill('SIGKILL');
  });
  afterAll(async () => {
    await connection?.close();
    await temporal?.stop();
    await api?.close();
    await env?.stop();
  });

  /** A worker in its own process; every one shares the staging folder (run state included) of `env`'s work dir. */
  async function startWorkerProcess(identity: string): Promise<ChildProcess> {
    const stack = testStack();
    const child = spawnTs('test/harness/worker-child.ts', [], {
      ...stack.env,
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_NAMESPACE: temporal.namespace,
      TEMPORAL_TASK_QUEUE: env.taskQueue,
      SAPI_URL: env.emulator.url,
      SAPI_TOKEN: env.emulator.token,
      SAPI_WORK_DIR: join(env.dataDir, 'work'),
      SAPI_TEST_WORKFLOW_BUNDLE: stack.workflowBundlePath,
      SAPI_TEST_WORKER_IDENTITY: identity,
    });
    workers.push(child);
    await waitForLine(child, /^READY$/, 60_000);
    return child;
  }

  const statePath = (key: string) => join(env.dataDir, 'work', 'staging', 'run-state', `${key}.json`);

  it('loads each of 12 windows exactly once through a worker kill and a Temporal restart while a live schedule keeps running, and leaves the live run state to the live runs', async () => {
    const gate = await startGate(api.url, 40); // a window takes a few pages of 40 ms: the kill comes while windows run
    try {
      let worker = await startWorkerProcess('backfill-first');
      const events = (from: string, to: string) => ({ endpoint: 'events', dataField: 'events', params: { from, to } });
      // the live runs: the same API and state key, today's day; the first stores the live state before the backfill
      const liveRun = (n: number) =>
        client.workflow.start('extractWorkflow', {
          taskQueue: env.taskQueue,
          workflowId: `backfill-live-${n}-${Date.now()}`,
          args: [
            {
              config: {
                parameters: {
                  api: { baseUrl: gate.url, pagination: PAGINATION },
                  config: { outputBucket: 'bf-live', jobs: [events('2026-11-01', '2026-11-02')] },
                },
              },
              stateKey: 'events-cfg',
            },
          ],
        });
      const live = (await (await liveRun(1)).result()) as ExtractResult;
      const liveState = readFileSync(statePath('events-cfg'), 'utf8');
      expect(live.runState?.stored).toEqual(JSON.parse(liveState));

      // the backfill's configuration reads each window's bounds as {"attr": "backfill.from"} / {"attr": "backfill.to"}
      const config = {
        parameters: {
          api: { baseUrl: gate.url, pagination: PAGINATION },
          config: { outputBucket: 'bf-events', incrementalOutput: true, jobs: [events({ attr: 'backfill.from' } as never, { attr: 'backfill.to' } as never)] },
        },
      };
      const configPath = join(env.dataDir, 'backfill-config.json');
      writeFileSync(configPath, JSON.stringify(config));
      const workflowId = `backfill-events-${Date.now()}`;
      const started = await runCli(
        [
          'backfill',
          'extract',
          configPath,
          '--from',
          '2025-01-01',
          '--to',
          '2025-01-13',
          '--window',
          'P1D',
          '--parallel',
          '3',
          '--state-key',
          'events-cfg',
          '-w',
          workflowId,
          '--detach',
        ],
        { TEMPORAL_ADDRESS: temporal.address, TEMPORAL_NAMESPACE: temporal.namespace, TEMPORAL_TASK_QUEUE: env.taskQueue },
      );
      expect(started.stderr).not.toMatch(/error/i);
      expect(started.code).toBe(0);
      const handle: WorkflowHandle = client.workflow.getHandle(workflowId);
      // the live runs go on beside the backfill as a Temporal Schedule would run them (through the kill and the
      // restart too): every 2 s, a run skipped while the last one is still going
      const scheduleId = `backfill-live-schedule-${Date.now()}`;
      const schedule = await client.schedule.create({
        scheduleId,
        spec: { intervals: [{ every: '2s' }] },
        policies: { overlap: 'SKIP' },
        action: {
          type: 'startWorkflow',
          workflowType: 'extractWorkflow',
          taskQueue: env.taskQueue,
          workflowId: `backfill-live-scheduled`,
          args: [
            {
              config: {
                parameters: {
                  api: { baseUrl: gate.url, pagination: PAGINATION },
                  config: { outputBucket: 'bf-live', jobs: [events('2026-11-01', '2026-11-02')] },
                },
              },
              stateKey: 'events-cfg',
            },
          ],
        },
      });

      // killed while windows run: some done, some going
      let atKill: BackfillProgress | undefined;
      await eventually(
        async () => {
          const progress = await handle.query<BackfillProgress>('progress').catch(() => undefined);
          if (progress && progress.counts.done >= 2 && progress.counts.running > 0) atKill = progress;
          return atKill !== undefined;
        },
        120_000,
        'the backfill never had windows done and going at once',
      );
      worker.kill('SIGKILL');
      expect(atKill!.counts.done).toBeLessThan(12);
      // then Temporal too, while the windows' children are mid-run with no worker: started again on its data
      await temporal.process.kill();
      temporal = await restartTemporal(temporal, { dataDir: temporalDir(), headless: true });
      worker = await startWorkerProcess('backfill-second');

      const result = (await handle.result()) as BackfillResult;
      expect(result).toMatchObject({ windows: 12, done: 12, cancelled: false });
      expect(result.perWindow.map((w) => [w.label, w.from, w.to])).toEqual(
        Array.from({ length: 12 }, (_, i) => [
          `w${String(i + 1).padStart(4, '0')}`,
          `2025-01-${String(i + 1).padStart(2, '0')}`,
          `2025-01-${String(i + 2).padStart(2, '0')}`,
        ]),
      );
      // every window's rows once, row by row: 12 days × 25 events, no duplicate from a window run twice
      const table = await env.emulator.readTable('in.c-bf-events.events');
      const at = (name: string) => table.columns.indexOf(name);
      const rows = table.rows.map((r) => `${r[at('id')]}|${r[at('day')]}|${r[at('n')]}|${r[at('value')]}`).sort();
      const expected = datedEvents('2025-01-01', '2025-01-13', 25)
        .map((e) => `${e.id}|${e.day}|${e.n}|${e.value}`)
        .sort();
      expect(rows).toEqual(expected);
      expect(result.rows).toBe(expected.length);
      // the windows neither read nor wrote the live state: the scheduled live runs form one unbroken chain from what
      // the first live run stored (each started from the state the one before it stored), and the state is byte for
      // byte what the last of them stored
      // (at least two scheduled runs ended, so the chain has a link made beside the backfill)
      await eventually(
        async () => {
          let ended = 0;
          for await (const run of client.workflow.list({ query: `TemporalScheduledById = "${scheduleId}" AND ExecutionStatus = "Completed"` }))
            ended += run ? 1 : 0;
          return ended >= 2;
        },
        120_000,
        'the live schedule never completed two runs',
      );
      await schedule.delete();
      const scheduled: ExtractResult[] = [];
      const ids: { workflowId: string; runId: string; startTime: Date }[] = [];
      for await (const run of client.workflow.list({ query: `TemporalScheduledById = "${scheduleId}"` })) ids.push(run);
      ids.sort((a, b) => a.startTime.getTime() - b.startTime.getTime());
      for (const run of ids) {
        const ended = await client.workflow
          .getHandle(run.workflowId, run.runId)
          .result()
          .catch(() => undefined);
        if (ended) scheduled.push(ended as ExtractResult);
      }
      expect(scheduled.length).toBeGreaterThanOrEqual(2);
      let previous = JSON.parse(liveState).time.previousStart as number;
      for (const beside of scheduled) {
        expect(beside.runTimes?.previousStart).toBe(previous);
        expect(beside.runState?.stored?.time.previousStart).toBe(beside.runTimes?.currentStart);
        previous = beside.runTimes!.currentStart;
      }
      expect(JSON.parse(readFileSync(statePath('events-cfg'), 'utf8'))).toEqual(scheduled.at(-1)!.runState?.stored);
      // each window's child asked the API for its own day only
      const asked = new Set(gate.seen.map((url) => new URL(url, 'http://x').searchParams.get('from')).filter((from) => from?.startsWith('2025-01')));
      expect(asked.size).toBe(12);
    } finally {
      await gate.close();
    }
  });
});
