import type { Job } from '../storage-api';
import { jobOutcome } from '../contracts/poll-schedule';
import type { JobSummary } from '../contracts/transfer';

/** The part of a job record workflows act on: status, error, and a few results (never the whole table object). */
export function summarizeJob(job: Job): JobSummary {
  const summary: JobSummary = { id: Number(job.id), status: job.status };
  if (job.operationName) summary.operationName = job.operationName;
  if (job.tableId) summary.tableId = job.tableId;
  const outcome = jobOutcome(job);
  if (outcome.kind === 'error') {
    summary.error = { message: outcome.message };
    if (outcome.code) summary.error.code = outcome.code;
    if (outcome.exceptionId) summary.error.exceptionId = outcome.exceptionId;
  }
  if (outcome.kind === 'success' && outcome.results && typeof outcome.results === 'object' && !Array.isArray(outcome.results)) {
    const results = outcome.results as Record<string, unknown>;
    const picked: NonNullable<JobSummary['results']> = {};
    if (typeof results.importedRowsCount === 'number') picked.importedRowsCount = results.importedRowsCount;
    if (typeof results.totalRowsCount === 'number') picked.totalRowsCount = results.totalRowsCount;
    if (Array.isArray(results.warnings) && results.warnings.length) picked.warnings = results.warnings.slice(0, 20).map(String);
    const file = results.file as { id?: unknown } | undefined;
    if (file && (typeof file.id === 'number' || typeof file.id === 'string')) picked.fileId = Number(file.id);
    if (typeof results.cacheHit === 'boolean') picked.cacheHit = results.cacheHit;
    summary.results = picked;
  }
  return summary;
}
