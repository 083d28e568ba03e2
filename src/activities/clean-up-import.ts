import { SapiError, SapiErrorCode, unlessNotFound } from '../errors';
import type { StorageClient } from '../storage-api';
import type { ActivityDeps } from './deps';
import { asActivity } from './context';

export interface CleanUpImportInput {
  connection?: string;
  /** The table this run created (a typed table whose load failed): dropped with its rows, if any. */
  tableId?: string;
  /** The file resource this run prepared or uploaded. */
  fileId?: number;
  /** The bucket this run created: removed when it holds no table. */
  bucketId?: string;
}

export interface CleanUpImportResult {
  /** Present when a table was to be dropped. */
  tableDeleted?: boolean;
  fileDeleted: boolean;
  bucketDeleted: boolean;
  /** Why something was kept (e.g. the bucket holds tables). */
  kept: string[];
}

/**
 * The compensation of a failed import: removes what the run created, so the project is left as the run found it.
 * The table it created goes first (so its bucket can go too), then the file resource; the bucket goes only while it
 * holds no table (someone may have added one meanwhile).
 * Things already gone count as removed, so the activity can be retried.
 */
export function cleanUpImport(deps: ActivityDeps) {
  return (input: CleanUpImportInput): Promise<CleanUpImportResult> =>
    asActivity(async () => {
      const storage = deps.storage(input.connection);
      const result: CleanUpImportResult = { fileDeleted: false, bucketDeleted: false, kept: [] };
      if (input.tableId !== undefined) {
        const dropped = await unlessNotFound(() => storage.deleteTable({ tableId: input.tableId! }));
        // an asynchronous drop answers with a job: the bucket check below must see the table gone
        if (dropped?.job) await waitForTableDrop(storage, dropped.job.id);
        result.tableDeleted = true;
      }
      if (input.fileId !== undefined) {
        await unlessNotFound(() => storage.deleteFile({ fileId: input.fileId! }));
        result.fileDeleted = true;
      }
      if (input.bucketId !== undefined) {
        const tables = await unlessNotFound(() => storage.listTables({ bucketId: input.bucketId }));
        if (tables && tables.length > 0) {
          result.kept.push(`bucket ${input.bucketId} holds ${tables.length} table(s): ${tables.map((t) => t.id).join(', ')}`);
        } else {
          await unlessNotFound(() => storage.deleteBucket({ bucketId: input.bucketId! }));
          result.bucketDeleted = true;
        }
      }
      return result;
    });
}

/** Waits (≤ 30 s) for an asynchronous table drop to end. */
async function waitForTableDrop(storage: StorageClient, jobId: number): Promise<void> {
  for (let i = 0; i < 60; i++) {
    const job = await storage.getJob({ jobId });
    if (job.status === 'success') return;
    if (job.status === 'error') {
      const message = typeof job.error === 'string' ? job.error : job.error?.message;
      throw new SapiError({ code: SapiErrorCode.JOB_FAILED, message: `dropping the table failed (job ${jobId}): ${message}`, retryable: true });
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}
