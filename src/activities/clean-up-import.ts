import { SapiErrorCode, SapiInputForbiddenError, SapiJobError, unlessNotFound } from '../errors';
import type { StorageClient } from '../storage-api';
import type { ActivityDeps } from './deps';
import { asActivity } from './context';
import { creatorOf, findBucket } from './ensure-bucket';
import { markedByThisChain } from './ownership';

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

/** Jobs looked through (newest first, pages of 100) for the job that created a table the clean-up is to drop. */
export const CREATING_JOB_SCAN_PAGES = 10;

/**
 * The compensation of a failed import: removes what the run created, so the project is left as the run found it.
 * The table it created goes first (so its bucket can go too), then the file resource; the bucket goes only while it
 * holds no table (someone may have added one meanwhile).
 * Things already gone count as removed, so the activity can be retried.
 *
 * Only what this run (its continue-as-new chain) provably created is removed, as the service recorded it: the file's
 * `runId` is the marker of one of the run's activities, the table was created by a job carrying such a marker, the
 * bucket's description names one ({@link creatorOf}). Anything named that is not provably the run's is refused
 * (`SAPI_INPUT_FORBIDDEN`, naming the field) before anything is removed: the state that named it is forged.
 */
export function cleanUpImport(deps: ActivityDeps) {
  return (input: CleanUpImportInput): Promise<CleanUpImportResult> =>
    asActivity(async () => {
      const storage = deps.storage(input.connection);
      await assertCreatedByThisRun(storage, input);
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
      throw new SapiJobError({ code: SapiErrorCode.JOB_FAILED, message: `dropping the table failed (job ${jobId}): ${message}`, jobId, retryable: true });
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

/**
 * Refuses a clean-up that names a file, table or bucket this run did not create (one that no longer exists is fine:
 * there is nothing to remove). Every one is checked before anything is removed.
 */
async function assertCreatedByThisRun(storage: StorageClient, input: CleanUpImportInput): Promise<void> {
  const refused: Array<{ field: string; why: string }> = [];
  if (input.fileId !== undefined) {
    const file = await unlessNotFound(() => storage.getFile({ fileId: input.fileId! }));
    const marker = (file as { runId?: unknown } | undefined)?.runId;
    if (file && !(await markedByThisChain(marker, 'fileId')))
      refused.push({ field: 'fileId', why: `file ${input.fileId} was not created by this run (its runId is ${JSON.stringify(marker ?? null)})` });
  }
  if (input.tableId !== undefined) {
    const table = await unlessNotFound(() => storage.getTable({ tableId: input.tableId! }));
    if (table && !(await createdByThisChain(storage, input.tableId)))
      refused.push({ field: 'tableId', why: `table ${input.tableId} was not created by a job of this run` });
  }
  if (input.bucketId !== undefined) {
    const bucket = await findBucket(storage, input.bucketId);
    if (bucket && !(await markedByThisChain(creatorOf(bucket), 'bucketId')))
      refused.push({ field: 'bucketId', why: `bucket ${input.bucketId} was not created by this run` });
  }
  if (refused.length === 0) return;
  const fields = refused.map((r) => r.field).join(', ');
  throw new SapiInputForbiddenError(
    fields,
    `the clean-up of a failed import removes only what its run created, and removed nothing: ${refused.map((r) => r.why).join('; ')}`,
    { refused: refused.map((r) => r.field) },
  );
}

/** Whether a recent `tableCreate`/`tableDefinitionCreate` job of `tableId` carries the marker of this run's chain. */
async function createdByThisChain(storage: StorageClient, tableId: string): Promise<boolean> {
  for (let page = 0; page < CREATING_JOB_SCAN_PAGES; page++) {
    const jobs = await storage.listJobs({ limit: 100, offset: page * 100 });
    for (const job of jobs) {
      if (job.operationName !== 'tableCreate' && job.operationName !== 'tableDefinitionCreate') continue;
      const created = job.tableId ?? (job.results as { id?: unknown } | null | undefined)?.id;
      if (created === tableId && job.status === 'success' && (await markedByThisChain((job as { runId?: unknown }).runId, 'tableId'))) return true;
    }
    if (jobs.length < 100) break;
  }
  return false;
}
