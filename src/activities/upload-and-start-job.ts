import type { CsvDialect, JobSummary } from '../contracts/transfer';
import { SHORT_PATH_JOB_WAIT_MS } from '../contracts/poll-schedule';
import { Context } from '@temporalio/activity';
import { findJobForImport } from '../storage-api/reconcile';
import type { ActivityDeps } from './deps';
import { activityMarker, asActivity } from './context';
import type { PreparedUpload } from './prepare-file';
import { uploadToTarget } from './upload-file';
import { createTableJob, loadTableJob } from './table-jobs';
import { summarizeJob } from './job-summary';
import { completeReceipt, type ReceiptDraft, type ReceiptOutcome } from '../contracts/receipts';
import { writeReceiptRow } from './write-receipt';

/** First and longest pause between its polls (ms): a small job is usually done within the first. */
const FIRST_POLL_MS = 50;
const MAX_POLL_MS = 500;

export interface UploadAndStartJobInput {
  connection?: string;
  /** Local path, `http(s)://` URL or `s3://` object. */
  source: string;
  /** From `prepareImport`. */
  target: PreparedUpload;
  gzip?: boolean;
  /** The worker's grant for a staged file it built (an extraction's load). */
  sourceGrant?: string;
  bucketId: string;
  /** The table's name in the bucket. */
  name: string;
  /** `create`: `tables-async` (a new table); `load`: `import-async` into the existing one. */
  mode: 'create' | 'load';
  incremental?: boolean;
  csv?: CsvDialect;
  primaryKey?: string[];
  /** Columns of a headerless source. */
  columns?: string[];
  /** Longest wait for the job's end in the activity (ms). Default {@link SHORT_PATH_JOB_WAIT_MS}. */
  waitMs?: number;
  /**
   * The load's receipt to write when the job ends well within this call: the run's part of it and the receipts table
   * the run names (absent: the worker's `SAPI_RECEIPTS_TABLE`). Absent: no receipt here (the run turned them off).
   */
  receipt?: { draft: ReceiptDraft; table?: string };
}

export interface UploadAndStartJobResult {
  bytes: number;
  sha256?: string;
  /** The job as last seen: ended, or still waiting/processing (the workflow polls on). */
  job: JobSummary;
  /**
   * The receipt, when the job ended well within this call and a receipt was asked for: `written` / `off` stand;
   * `failed` (its write failed here, `error` says why) is written again by the workflow's `writeReceipt`, with its
   * retries. Absent: the workflow writes it after polling.
   */
  receipt?: ReceiptOutcome;
}

/**
 * The short path of a small import (see `SMALL_IMPORT_MAX_BYTES`): uploads the source with one request, starts the
 * table job at most once (`tables-async` / `import-async` carrying this activity's marker: a retry finds the job an
 * earlier attempt started, as `createTableAsync` does), and polls it for up to `waitMs` so a quick job needs no
 * timer and no further activity. A retry first looks for the job an earlier attempt started (its marker, the file,
 * the table): when there is one, the file is not uploaded again (the job may be reading it, and the prepared file's
 * credentials may have expired meanwhile, which would send the workflow to a fresh file and a second job). Once the
 * job started, nothing fails the activity: a poll that fails leaves the job to the workflow's polling. A job seen
 * ending well within the call gets its receipt here (`input.receipt`), so a small import needs no third activity.
 */
export function uploadAndStartJob(deps: ActivityDeps) {
  return (input: UploadAndStartJobInput): Promise<UploadAndStartJobResult> =>
    asActivity(async () => {
      const waitMs = input.waitMs ?? SHORT_PATH_JOB_WAIT_MS;
      const earlier = await earlierAttemptsJob(deps, input);
      if (earlier) {
        const file = await deps.storage(input.connection).getFile({ fileId: input.target.fileId });
        return withReceipt(deps, input, { bytes: file.sizeBytes ?? 0, job: await waitBriefly(deps, input.connection, summarizeJob(earlier), waitMs) });
      }
      const uploaded = await uploadToTarget(deps, {
        connection: input.connection,
        source: input.source,
        target: input.target,
        gzip: input.gzip,
        sourceGrant: input.sourceGrant,
      });
      const fileId = input.target.fileId;
      const job =
        input.mode === 'create'
          ? await createTableJob(deps, {
              connection: input.connection,
              bucketId: input.bucketId,
              name: input.name,
              fileId,
              csv: input.csv,
              primaryKey: input.primaryKey,
              columns: input.columns,
            })
          : await loadTableJob(deps, {
              connection: input.connection,
              tableId: `${input.bucketId}.${input.name}`,
              fileId,
              incremental: input.incremental ?? false,
              csv: input.csv,
              columns: input.columns,
            });
      return withReceipt(deps, input, { bytes: uploaded.bytes, sha256: uploaded.sha256, job: await waitBriefly(deps, input.connection, job, waitMs) });
    });
}

/**
 * The receipt of a job seen ending well within the call, written here (an upsert by its key: a retry of this activity
 * that writes it again keeps one row). Its write never fails the activity: a failure comes back as `failed` and the
 * workflow writes it with its own activity and retries.
 */
async function withReceipt(deps: ActivityDeps, input: UploadAndStartJobInput, result: UploadAndStartJobResult): Promise<UploadAndStartJobResult> {
  const { job } = result;
  if (!input.receipt || job.status !== 'success') return result;
  const receipt = completeReceipt(input.receipt.draft, {
    tableId: job.tableId ?? `${input.bucketId}.${input.name}`,
    rows: job.results?.importedRowsCount ?? 0,
    bytes: result.bytes,
    jobId: job.id,
    endedAt: new Date().toISOString(),
  });
  const table = input.receipt.table;
  try {
    const written = await writeReceiptRow(deps, { connection: input.connection, receipt, ...(table !== undefined ? { table } : {}) });
    result.receipt = written.status === 'off' ? { receipt, status: 'off' } : { receipt, status: 'written', table: written.table };
  } catch (err) {
    result.receipt = { receipt, status: 'failed', ...(table !== undefined ? { table } : {}), error: err instanceof Error ? err.message : String(err) };
  }
  return result;
}

/** From the second attempt on: the job an earlier attempt of this activity started for this file and table, if any. */
async function earlierAttemptsJob(deps: ActivityDeps, input: UploadAndStartJobInput) {
  const info = Context.current().info;
  if (info.attempt <= 1) return undefined;
  const client = deps.storage(input.connection);
  const scan = {
    client,
    fileId: input.target.fileId,
    runId: activityMarker(),
    since: info.scheduledTimestampMs - 60_000,
    signal: Context.current().cancellationSignal,
  };
  return input.mode === 'create'
    ? findJobForImport({ ...scan, operationName: 'tableCreate', bucketId: input.bucketId, name: input.name })
    : findJobForImport({ ...scan, operationName: 'tableImport', tableId: `${input.bucketId}.${input.name}` });
}

/** Polls `job` until it ends or `waitMs` passed; the last summary seen (a failed poll ends the wait). */
async function waitBriefly(deps: ActivityDeps, connection: string | undefined, job: JobSummary, waitMs: number): Promise<JobSummary> {
  const until = Date.now() + waitMs;
  let pause = FIRST_POLL_MS;
  let last = job;
  while ((last.status === 'waiting' || last.status === 'processing') && Date.now() + pause <= until) {
    await new Promise((resolve) => setTimeout(resolve, pause));
    pause = Math.min(pause * 2, MAX_POLL_MS);
    try {
      last = summarizeJob(await deps.storage(connection).getJob({ jobId: last.id }));
    } catch {
      return last; // the workflow polls on with its own retries
    }
  }
  return last;
}
