/**
 * Priority and fairness on the dev server (its dynamic config enables both): runs started with a priority key go
 * ahead of a backlog, fairness keys share a queue by weight, a run started without a fairness key gives its
 * activities its Storage connection as one, and the CLI's flags and schedules set them.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import type { Priority } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { ImportTableInput } from '../../../src/contracts/transfer';
import { runCli } from '../../harness/processes';
import { startSapiTestEnv, type SapiTestEnv } from '../../harness/sapi-env';
import { testStack } from '../../harness/stack-state';

const EventType = temporal.api.enums.v1.EventType;

describe('priority and fairness of runs', () => {
  let env: SapiTestEnv;
  let source: string;
  // one activity at a time: the queue's backlog is dispatched in the server's order, which is what is measured
  beforeAll(async () => {
    env = await startSapiTestEnv('priority', { worker: false, env: { SAPI_MAX_CONCURRENT_ACTIVITIES: '1' } });
    source = join(env.dataDir, 'p.csv');
    writeFileSync(source, 'id\n1\n2\n');
  });
  afterAll(() => env?.stop());
  afterEach(async () => {
    await env.worker?.stop().catch(() => undefined);
    (env as { worker?: unknown }).worker = undefined;
  });

  const polling = { initialMs: 100, maxMs: 200 };
  const importOf = (table: string): ImportTableInput => ({ source, bucketId: 'in.c-priority', createBucket: true, table, polling });
  const start = (id: string, input: ImportTableInput, priority?: Priority) =>
    env.client.workflow.start('importTableWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: `${id}-${Date.now()}`,
      args: [input],
      ...(priority ? { priority } : {}),
    });
  /** Waits for every run; returns their workflow ids in the order they closed. */
  async function closingOrder(handles: WorkflowHandle[]): Promise<string[]> {
    const closed = await Promise.all(
      handles.map(async (h) => {
        await h.result();
        return { id: h.workflowId, at: (await h.describe()).closeTime!.getTime() };
      }),
    );
    return closed.sort((a, b) => a.at - b.at).map((c) => c.id);
  }

  it('a high-priority import queued behind 30 low-priority ones finishes ahead of most of them', async () => {
    const low = await Promise.all(Array.from({ length: 30 }, (_, i) => start(`low-${i}`, importOf(`low${i}`), { priorityKey: 5 })));
    const high = await start('high', importOf('high'), { priorityKey: 1 });
    await env.startWorker();
    const order = await closingOrder([...low, high]);
    // FIFO would close it last (31st); by priority its every activity goes first
    expect(order.indexOf(high.workflowId)).toBeLessThan(10);
  });

  it('two fairness keys share a backlogged queue by their weights (3 : 1)', async () => {
    // the light key's runs are queued first: FIFO would finish them all before any heavy one
    const light = await Promise.all(
      Array.from({ length: 16 }, (_, i) => start(`light-${i}`, importOf(`light${i}`), { fairnessKey: 'tenant-light', fairnessWeight: 1 })),
    );
    const heavy = await Promise.all(
      Array.from({ length: 16 }, (_, i) => start(`heavy-${i}`, importOf(`heavy${i}`), { fairnessKey: 'tenant-heavy', fairnessWeight: 3 })),
    );
    await env.startWorker();
    const order = await closingOrder([...light, ...heavy]);
    // each run needs 7 activities in turn: with 3 of 4 dispatches the heavy key's runs all finish while the light
    // key's are half way (16 of the first 16 here); equal shares interleave them (about 8), FIFO finishes light first (0)
    const heavyFirst = order.slice(0, 16).filter((id) => id.startsWith('heavy-')).length;
    expect(heavyFirst).toBeGreaterThanOrEqual(12);
  });

  it("gives a run's activities its connection as fairness key, or the key it was started with", async () => {
    await env.startWorker();
    const plain = await start('plain', importOf('plain'));
    const keyed = await start('keyed', importOf('keyed'), { priorityKey: 2, fairnessKey: 'team-a' });
    await Promise.all([plain.result(), keyed.result()]);
    const scheduled = async (h: WorkflowHandle) =>
      ((await h.fetchHistory()).events ?? [])
        .filter((e) => e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)
        .map((e) => e.activityTaskScheduledEventAttributes?.priority);
    const plainPriorities = await scheduled(plain);
    expect(plainPriorities.length).toBeGreaterThanOrEqual(2); // a small import: prepareImport + uploadAndStartJob
    for (const p of plainPriorities) expect(p?.fairnessKey).toBe('storage:default');
    // the run's own key is inherited (nothing set on the activity)
    for (const p of await scheduled(keyed)) expect(p?.fairnessKey ?? '').toBe('');
    expect((await keyed.describe()).raw.workflowExecutionInfo?.priority).toMatchObject({ priorityKey: 2, fairnessKey: 'team-a' });
  });

  it("the CLI sets a run's priority from its flags, and a schedule's runs default to priority 2", async () => {
    const stack = testStack();
    const cliEnv = { TEMPORAL_ADDRESS: stack.temporalAddress, TEMPORAL_NAMESPACE: stack.namespace, TEMPORAL_TASK_QUEUE: env.taskQueue };
    const id = `cli-priority-${Date.now()}`;
    const started = await runCli(
      [
        'import',
        source,
        '--bucket',
        'in.c-priority',
        '--table',
        'cli',
        '-w',
        id,
        '--detach',
        '--priority-key',
        '1',
        '--fairness-key',
        'tenant-x',
        '--fairness-weight',
        '2.5',
        '--no-worker-check',
      ],
      cliEnv,
    );
    expect(started.stderr).not.toMatch(/error/i);
    expect(started.code).toBe(0);
    expect((await env.client.workflow.getHandle(id).describe()).raw.workflowExecutionInfo?.priority).toMatchObject({
      priorityKey: 1,
      fairnessKey: 'tenant-x',
      fairnessWeight: 2.5,
    });
    await env.client.workflow.getHandle(id).terminate('test over');

    const refused = await runCli(['import', source, '--bucket', 'in.c-priority', '--table', 'cli', '--priority-key', '7'], cliEnv);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('priority must be an integer from 1 (first) to 5 (last), got 7');

    const scheduleId = `priority-schedule-${Date.now()}`;
    const created = await runCli(
      ['schedule', 'import', scheduleId, source, '--bucket', 'in.c-priority', '--table', 'sched', '--mode', 'load', '--every', '1h', '--paused'],
      cliEnv,
    );
    expect(created.code).toBe(0);
    const handle = env.client.schedule.getHandle(scheduleId);
    expect((await handle.describe()).action).toMatchObject({ priority: { priorityKey: 2 } });
    await handle.delete();
  });
});
