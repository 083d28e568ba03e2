/**
 * Runs queried from their first moment still replay. A query that reaches the worker while the first workflow task
 * waits for its local activity (the search attributes a namespace has registered) can make the worker complete that
 * task before the workflow saw the local activity's result; the result then reaches the workflow in the next task.
 * A replay resolves the local activity from its marker in the first task, so any `patched()` the workflow asks
 * between that result and its next activity must not depend on which task it lands in (it once did: the second
 * worker of the short-call-kill chaos test failed every task with a non-determinism error).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { ExportTableInput, ImportTableInput } from '../../../src/contracts/transfer';
import { fetchHistories, RECORD_HISTORIES_ENV, replayFailures, saveHistories } from '../../harness/replay';
import { startSapiTestEnv, type SapiTestEnv } from '../../harness/sapi-env';
import { testStack } from '../../harness/stack-state';

const EventType = temporal.api.enums.v1.EventType;

describe('runs queried from their first moment', () => {
  let env: SapiTestEnv;
  beforeAll(async () => (env = await startSapiTestEnv('replay-queried')));
  afterAll(() => env?.stop());

  /** Per run: its local activity's result reached the workflow in a later task than the local activity ran in. */
  const splitById: Record<string, boolean> = {};
  /** Runs a workflow to its end while four callers query it without pause; true when the queries split its first task. */
  async function queried(type: string, workflowId: string, input: object, handles: Record<string, WorkflowHandle>): Promise<boolean> {
    const handle = await env.client.workflow.start(type, { taskQueue: env.taskQueue, workflowId, args: [input] });
    let done = false;
    const hammer = Promise.all(
      [0, 1, 2, 3].map(async () => {
        while (!done) await handle.query('progress').catch(() => undefined);
      }),
    );
    await handle.result().catch(() => undefined);
    done = true;
    await hammer;
    handles[workflowId] = handle;
    const events = (await handle.fetchHistory()).events ?? [];
    const marker = events.findIndex(
      (e) => e.eventType === EventType.EVENT_TYPE_MARKER_RECORDED && e.markerRecordedEventAttributes?.markerName === 'core_local_activity',
    );
    splitById[workflowId] = events[marker + 1]?.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED;
    return splitById[workflowId];
  }

  it('replay, whichever workflow task the local activity result landed in', async () => {
    const polling = { initialMs: 200, maxMs: 1000 };
    const source = join(env.dataDir, 'q.csv');
    writeFileSync(source, 'id,name\n1,a\n2,b\n');
    const handles: Record<string, WorkflowHandle> = {};
    // each run splits its first task about one time in four: twelve runs make a miss unlikely (0.75^12 ≈ 3 %)
    const first = await queried(
      'importTableWorkflow',
      'queried-import-0',
      { source, bucketId: 'in.c-queried', createBucket: true, table: 't0', polling } satisfies ImportTableInput,
      handles,
    );
    const splits = await Promise.all([
      ...[1, 2, 3, 4, 5, 6].map((i) =>
        queried(
          'importTableWorkflow',
          `queried-import-${i}`,
          { source, bucketId: 'in.c-queried', table: `t${i}`, polling } satisfies ImportTableInput,
          handles,
        ),
      ),
      ...[1, 2, 3, 4, 5].map((i) =>
        queried(
          'exportTableWorkflow',
          `queried-export-${i}`,
          { tableId: 'in.c-queried.t0', destination: join(env.dataDir, 'out', `t${i}.csv`), polling } satisfies ExportTableInput,
          handles,
        ),
      ),
    ]);
    const splitOf = [first, ...splits];
    const splitIds = new Set(Object.keys(handles).filter((id) => splitById[id]));
    console.log(`runs whose local activity result landed in a later workflow task: ${splitOf.filter(Boolean).length} of ${splitOf.length}`);
    const statuses = await Promise.all(Object.values(handles).map(async (h) => (await h.describe()).status.name));
    expect(statuses).toEqual(Object.values(handles).map(() => 'COMPLETED'));
    const bundle = { code: readFileSync(testStack().workflowBundlePath, 'utf8') };
    const histories = await fetchHistories(handles);
    expect(await replayFailures({ workflowBundle: bundle }, histories)).toEqual([]);
    // the unit tier replays a split import and a split export of this version from test/fixtures/histories
    if (process.env[RECORD_HISTORIES_ENV]) {
      const split = histories.filter((h) => splitIds.has(h.workflowId));
      const pick = (kind: string) => split.find((h) => h.workflowId.includes(kind));
      saveHistories(
        (['import', 'export'] as const).flatMap((kind) => {
          const found = pick(kind);
          return found ? [{ workflowId: `${kind}-queried-split`, history: found.history }] : [];
        }),
      );
    }
  });
});
