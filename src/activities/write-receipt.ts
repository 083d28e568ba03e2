import { Readable } from 'node:stream';
import { Context } from '@temporalio/activity';
import { describeJobFailure, SapiError, SapiErrorCode, SapiInvalidInputError, unlessNotFound } from '../errors';
import { RECEIPT_COLUMNS, RECEIPTS_TABLE_PATTERN, receiptRow, type LoadReceipt } from '../contracts/receipts';
import type { Job, StorageClient } from '../storage-api';
import type { ActivityDeps } from './deps';
import { asActivity, heartbeat } from './context';
import { ensureBucketExists } from './ensure-bucket';
import { summarizeJob } from './job-summary';

export interface WriteReceiptInput {
  connection?: string;
  receipt: LoadReceipt;
  /** The receipts table the run names; absent: the worker's `SAPI_RECEIPTS_TABLE`. */
  table?: string;
}

export interface WriteReceiptResult {
  /** `off`: the run named no table and the worker's setting is `off`. */
  status: 'written' | 'off';
  table?: string;
}

/** The receipts table's primary key: a repeated write of one receipt upserts its row. */
export const RECEIPT_KEY = 'receipt_id';

/** Longest wait between two polls of the receipt's load job (ms). */
const MAX_POLL_MS = 2_000;

/**
 * Writes one load receipt as a row of the receipts table: creates the bucket and the table (primary key
 * `receipt_id`) when missing, uploads the row (importer) and loads it incrementally, so writing the same receipt
 * again (an activity retry, a worker killed after the load) upserts the one row; the uploaded file is removed after.
 * A receipts table without `receipt_id` as its primary key is refused (its rows would repeat).
 */
export function writeReceipt(deps: ActivityDeps) {
  return (input: WriteReceiptInput): Promise<WriteReceiptResult> => asActivity(() => writeReceiptRow(deps, input));
}

/**
 * What {@link writeReceipt} does, for an activity that writes a receipt itself (the short path's `uploadAndStartJob`,
 * when it saw its job end well): must run inside an activity (it heartbeats while the receipt's job runs).
 */
export async function writeReceiptRow(deps: ActivityDeps, input: WriteReceiptInput): Promise<WriteReceiptResult> {
  const table = input.table ?? deps.settings.receiptsTable;
  if (table === null) return { status: 'off' };
  if (!RECEIPTS_TABLE_PATTERN.test(table))
    throw new SapiInvalidInputError(`receipts table must be a table id like in.c-sapi-temporal.receipts, got ${JSON.stringify(table)}`);
  try {
    await upsertReceipt(deps, input, table);
  } catch (err) {
    if (!(err instanceof SapiError) || err instanceof SapiInvalidInputError) throw err;
    // where it failed: the receipts table (the load it receipts stands)
    throw new SapiError({
      code: err.code,
      message: `writing the receipt ${input.receipt.receiptId} into ${table} failed: ${err.message}`,
      retryable: err.retryable,
      status: err.status,
      serviceCode: err.serviceCode,
      exceptionId: err.exceptionId,
      retryAfterMs: err.retryAfterMs,
      mayHaveReachedService: err.mayHaveReachedService,
      cause: err,
      details: { receiptsTable: table },
    });
  }
  return { status: 'written', table };
}

/** Creates the receipts table (and bucket) when missing, then upserts the receipt's row. */
async function upsertReceipt(deps: ActivityDeps, input: WriteReceiptInput, table: string): Promise<void> {
  const cut = table.lastIndexOf('.');
  const bucketId = table.slice(0, cut);
  const name = table.slice(cut + 1);
  const storage = deps.storage(input.connection);
  const existing = await unlessNotFound(() => storage.getTable({ tableId: table }));
  if (existing && !existing.primaryKey.some((c) => c.toLowerCase() === RECEIPT_KEY)) {
    throw new SapiInvalidInputError(
      `receipts table ${table} has primary key [${existing.primaryKey.join(', ')}]; it needs ${RECEIPT_KEY} (a receipt written twice would be two rows): name another table or drop it`,
      { tableId: table },
    );
  }
  if (!existing) await ensureBucketExists(deps, { connection: input.connection, bucketId });
  const row = receiptRow(input.receipt);
  const csv = `${RECEIPT_COLUMNS.map(csvValue).join(',')}\n${RECEIPT_COLUMNS.map((c) => csvValue(row[c])).join(',')}\n`;
  const file = await storage.uploadViaImporter({
    name: 'sapi-temporal-receipt.csv',
    stream: Readable.from([Buffer.from(csv)]),
    sizeBytes: Buffer.byteLength(csv),
    tags: ['sapi-temporal-receipt'],
  });
  try {
    let job: Job | undefined;
    if (!existing) {
      job = await ended(storage, await storage.createTableAsync({ bucketId, name, dataFileId: file.id, primaryKey: [RECEIPT_KEY] }));
      // another run's receipt created the table meanwhile: load into it
      if (job.status !== 'success' && !(await unlessNotFound(() => storage.getTable({ tableId: table })))) throw failure(job, table);
    }
    if (job?.status !== 'success') {
      job = await ended(storage, await storage.loadTableAsync({ tableId: table, dataFileId: file.id, incremental: true }));
      if (job.status !== 'success') throw failure(job, table);
    }
  } finally {
    await storage.deleteFile({ fileId: file.id }).catch(() => undefined); // a leftover file is only clutter
  }
}

/** The job once ended (polled every 0.2–2 s; the activity's heartbeat tells a dead worker). */
async function ended(storage: StorageClient, job: Job): Promise<Job> {
  const context = Context.current();
  for (let delay = 200; job.status === 'waiting' || job.status === 'processing'; delay = Math.min(delay * 2, MAX_POLL_MS)) {
    heartbeat({ jobId: job.id, status: job.status });
    await context.sleep(delay);
    job = await storage.getJob({ jobId: job.id });
  }
  return job;
}

function failure(job: Job, table: string): SapiError {
  const error = summarizeJob(job).error;
  return new SapiError({
    code: SapiErrorCode.JOB_FAILED,
    message: describeJobFailure({
      id: job.id,
      operationName: job.operationName,
      tableId: table,
      message: `the receipt's load job ended ${job.status}: ${error?.message ?? 'no message'}`,
      code: error?.code,
      exceptionId: error?.exceptionId,
    }),
    retryable: false,
    serviceCode: error?.code,
    exceptionId: error?.exceptionId,
    details: { jobId: job.id },
  });
}

/** One CSV value, always enclosed (`"` doubled). */
function csvValue(value: string): string {
  return `"${value.replace(/"/g, '""')}"`;
}
