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
}

export interface UploadAndStartJobResult {
  bytes: number;
  sha256?: string;
  /** The job as last seen: ended, or still waiting/processing (the workflow polls on). */
  job: JobSummary;
}

/**
 * The short path of a small import (see `SMALL_IMPORT_MAX_BYTES`): uploads the source with one request, starts the
 * table job at most once (`tables-async` / `import-async` carrying this activity's marker: a retry finds the job an
 * earlier attempt started, as `createTableAsync` does), and polls it for up to `waitMs` so a quick job needs no
 * timer and no further activity. A retry first looks for the job an earlier attempt started (its marker, the file,
 * the table): when there is one, the file is not uploaded again (the job may be reading it, and the prepared file's
 * credentials may have expired meanwhile, which would send the workflow to a fresh file and a second job). Once the
 * job started, nothing fails the activity: a poll that fails leaves the job to the workflow's polling.
 */
export function uploadAndStartJob(deps: ActivityDeps) {
  return (input: UploadAndStartJobInput): Promise<UploadAndStartJobResult> =>
    asActivity(async () => {
      const earlier = await earlierAttemptsJob(deps, input);
      if (earlier) {
        const file = await deps.storage(input.connection).getFile({ fileId: input.target.fileId });
        return { bytes: file.sizeBytes ?? 0, job: await waitBriefly(deps, input.connection, summarizeJob(earlier), input.waitMs ?? SHORT_PATH_JOB_WAIT_MS) };
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
      return { bytes: uploaded.bytes, sha256: uploaded.sha256, job: await waitBriefly(deps, input.connection, job, input.waitMs ?? SHORT_PATH_JOB_WAIT_MS) };
    });
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
