import { ApplicationFailure, continueAsNew, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { SapiActivities } from '../activities';
import { runTransfer } from './transfer-run';
import { activityOptions, outageBudget, shortTransferOptions, transferOptions } from './options';
import { waitForJob } from './polling';
import type { ExportTableInput, ExportTableResult, JobSummary, TransferProgress } from '../contracts/transfer';
import { SapiErrorCode } from '../errors';
import { exportAttributes } from '../contracts/search-attributes';
import { defaultFairnessKey } from '../contracts/priority';
import { prioritized, runPriority } from './priority';
import { ownContinuation } from './continued';
import { describeCall, jobPoller } from './import-table';

/**
 * Exports a table to a file: the destination checked where it is (input policy, overwrite) → `export-async` (reconciled after a lost response) → poll with durable timers →
 * file details with read credentials → download (sliced files: slices in parallel, concatenated in manifest
 * order, header added from the table's columns, gzip decompressed), resumable → `{path, bytes, sha256, …}`.
 */
export async function exportTableWorkflow(input: ExportTableInput & { resume?: { job: JobSummary; pollingSince: number } }): Promise<ExportTableResult> {
  ownContinuation(input.resume, 'exportTableWorkflow');
  const progress: TransferProgress = { phase: 'starting', bytes: 0, tableId: input.tableId };
  const connection = input.connection;
  const attributes = typeof input.tableId === 'string' ? exportAttributes(input) : {};
  // a run started without a fairness key shares the queue fairly by its Storage connection
  const priority = runPriority(defaultFairnessKey({ operation: 'export', connection }));
  return runTransfer(
    `export of ${input.tableId}`,
    progress,
    async (view, control) => {
      const budget = outageBudget(input.outageBudgetMs);
      const acts = view.activities(proxyActivities<SapiActivities>(prioritized(activityOptions(budget), priority)), describeCall(progress));
      const transfer = view.activities(proxyActivities<SapiActivities>(prioritized(transferOptions(input.transferTaskQueue, 'download', budget), priority)));
      const { getJob, awaitJob } = jobPoller(view, progress, priority, budget, connection);
      if (!input.tableId || !input.destination) {
        throw ApplicationFailure.nonRetryable('invalid export input: tableId and destination are required', SapiErrorCode.INVALID_INPUT);
      }
      if (!input.resume) {
        progress.phase = 'checking';
        await view
          .activities(proxyActivities<SapiActivities>(prioritized(shortTransferOptions(input.transferTaskQueue, budget), priority)))
          .checkDestination({ destination: input.destination, overwrite: input.overwrite });
      }
      progress.phase = 'exporting';
      const first =
        input.resume?.job ??
        (await acts.exportTableAsync({
          connection,
          tableId: input.tableId,
          columns: input.columns,
          limit: input.limit,
          whereFilters: input.whereFilters,
          orderBy: input.orderBy,
          changedSince: input.changedSince,
          gzip: input.gzip,
        }));
      progress.jobId = first.id;
      // continue-as-new carries when polling began, so the deadline spans every run
      const pollingSince = input.resume?.pollingSince ?? Date.now();
      let polls = 0;
      control.pollingFrom(pollingSince);
      const done = await waitForJob(
        first,
        async (jobId) => {
          if (++polls > 1 && workflowInfo().continueAsNewSuggested) {
            await continueAsNew<typeof exportTableWorkflow>({ ...input, polling: control.polling, resume: { job: { ...first, id: jobId }, pollingSince } });
          }
          return getJob(jobId);
        },
        control.polling,
        (job) => {
          progress.jobStatus = job.status;
          view.refresh();
        },
        pollingSince,
        awaitJob,
      );
      delete progress.deadlineAt;
      const fileId = done.results?.fileId;
      if (fileId === undefined) {
        throw ApplicationFailure.nonRetryable(`export job ${done.id} succeeded without results.file.id`, SapiErrorCode.INVALID_RESPONSE, { jobId: done.id });
      }
      progress.fileId = fileId;
      progress.phase = 'downloading';
      const downloaded = await transfer.downloadFile({
        connection,
        fileId,
        tableId: input.tableId,
        destination: input.destination,
        ...(input.overwrite ? { overwrite: true } : {}),
        header: input.header ?? true,
        columns: input.columns,
        gunzip: input.gzip ? !(input.keepGzip ?? false) : undefined,
      });
      progress.phase = 'done';
      progress.bytes = downloaded.bytes;
      return { ...downloaded, fileId, jobId: done.id };
    },
    { attributes, totals: (r) => ({ SapiBytes: r.bytes }), polling: input.polling },
  );
}
