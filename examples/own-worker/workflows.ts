// Your workflows beside the plugin's: re-export ours, add yours. The worker bundles this module (workflowsPath).
import { executeChild } from '@temporalio/workflow';
import type { ImportTableInput, ImportTableResult } from 'sapi-temporal';

export * from 'sapi-temporal/workflows';

/** Loads each file into the same table, one after the other, as child imports (each exactly once, resumable). */
export async function importAllWorkflow(sources: string[], target: Pick<ImportTableInput, 'bucketId' | 'table'>): Promise<number> {
  let rows = 0;
  for (const [index, source] of sources.entries()) {
    const input: ImportTableInput = { ...target, source, mode: 'load', incremental: true };
    const result = await executeChild<(input: ImportTableInput) => Promise<ImportTableResult>>('importTableWorkflow', {
      workflowId: `${target.bucketId}.${target.table}-part-${index}`,
      args: [input],
    });
    rows += result.importedRowsCount;
  }
  return rows;
}
