// The workflows of the bench's empty SDK worker (`bench/empty-worker-child.ts`).
import { patched, proxyActivities, proxyLocalActivities, upsertSearchAttributes } from '@temporalio/workflow';
import type { FloorActivities } from '../floor-activities';

/** Returns at once, so the worker has a workflow context as any worker that ran a workflow has (the idle scenario). */
export async function emptyWorkflow(): Promise<string> {
  return 'done';
}

const { floorPrepare, floorUploadAndStart } = proxyActivities<FloorActivities>({ startToCloseTimeout: '1 minute' });
const { floorSearchAttributes } = proxyLocalActivities<FloorActivities>({ startToCloseTimeout: '10 seconds' });

/**
 * The Temporal shape of a small import on the short path, with no work in it (the concurrency scenario's "SDK floor"):
 * the same events as `importTableWorkflow`'s saved history `import-short-path` — a patch marker, a local activity,
 * four search-attribute upserts, two activities whose results are about the size of ours, three workflow tasks — so
 * what it costs the worker and Temporal is the orchestration's floor for that shape on this machine.
 */
export async function importShapeWorkflow(input: { table: string }): Promise<{ tableId: string; rows: number }> {
  patched('bench-floor-v1');
  await floorSearchAttributes();
  upsertSearchAttributes({ SapiOperation: ['import'], SapiTableId: [input.table], SapiPhase: ['checking'] });
  const prepared = await floorPrepare(input.table);
  upsertSearchAttributes({ SapiPhase: ['importing'] });
  const done = await floorUploadAndStart(prepared);
  upsertSearchAttributes({ SapiPhase: ['done'], SapiRows: [done.rows] });
  return { tableId: input.table, rows: done.rows };
}
