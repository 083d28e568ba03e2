import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { describeJobFailure, inContext, SapiError, SapiErrorCode, SapiInvalidInputError, SapiJobError, unlessNotFound } from '../errors';
import { RECEIPT_COLUMNS, RECEIPTS_TABLE_PATTERN, receiptRow, type LoadReceipt } from '../contracts/receipts';
import type { Job, StorageClient } from '../storage-api';
import type { ActivityDeps } from './deps';
import { asActivity } from './context';
import { ReceiptBatches, type ReceiptTarget } from './receipt-batches';
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
 * The receipts a worker writes into one table at the same time go in one file and one load job
 * ({@link ReceiptBatches}). A receipts table without `receipt_id` as its primary key is refused (its rows would
 * repeat).
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
    // grouped with the receipts the worker's other activities write into that table meanwhile (one load job)
    await stateOf(deps).batches.write({ connection: input.connection, table }, input.receipt);
  } catch (err) {
    if (!(err instanceof SapiError) || err instanceof SapiInvalidInputError) throw err;
    // where it failed: the receipts table (the load it receipts stands); same class and code
    throw inContext(err, `writing the receipt ${input.receipt.receiptId} into ${table} failed: ${err.message}`, { receiptsTable: table });
  }
  return { status: 'written', table };
}

/** How long a receipts table seen with the right primary key is written to without looking at it again (ms). */
export const RECEIPTS_TABLE_RECHECK_MS = 60_000;

/** A worker's receipt batches and the receipts tables it has seen right (when, by connection and table). */
interface ReceiptState {
  batches: ReceiptBatches;
  checked: Map<string, number>;
}

const states = new WeakMap<ActivityDeps, ReceiptState>();

function stateOf(deps: ActivityDeps): ReceiptState {
  let state = states.get(deps);
  if (!state) {
    const checked = new Map<string, number>();
    state = { checked, batches: new ReceiptBatches((target, receipts) => upsertReceipts(deps, checked, target, receipts)) };
    states.set(deps, state);
  }
  return state;
}

/**
 * Creates the receipts table (and bucket) when missing, then upserts the receipts' rows (one file, one load job).
 * A table seen with the right primary key within {@link RECEIPTS_TABLE_RECHECK_MS} is not looked at again; a load
 * into it that fails forgets that, so the next write looks again.
 */
async function upsertReceipts(deps: ActivityDeps, checked: Map<string, number>, target: ReceiptTarget, receipts: LoadReceipt[]): Promise<void> {
  const table = target.table;
  const key = `${target.connection ?? ''}\n${table}`;
  const cut = table.lastIndexOf('.');
  const bucketId = table.slice(0, cut);
  const name = table.slice(cut + 1);
  const storage = deps.storage(target.connection);
  const seenAt = checked.get(key);
  const recent = seenAt !== undefined && Date.now() - seenAt < RECEIPTS_TABLE_RECHECK_MS;
  const existing = recent ? true : await unlessNotFound(() => storage.getTable({ tableId: table }));
  if (typeof existing === 'object' && !existing.primaryKey.some((c) => c.toLowerCase() === RECEIPT_KEY)) {
    throw new SapiInvalidInputError(
      `receipts table ${table} has primary key [${existing.primaryKey.join(', ')}]; it needs ${RECEIPT_KEY} (a receipt written twice would be two rows): name another table or drop it`,
      { tableId: table },
    );
  }
  if (!existing) await ensureBucketExists(deps, { connection: target.connection, bucketId });
  const lines = [RECEIPT_COLUMNS.map(csvValue).join(',')];
  for (const receipt of receipts) {
    const row = receiptRow(receipt);
    lines.push(RECEIPT_COLUMNS.map((c) => csvValue(row[c])).join(','));
  }
  const csv = Buffer.from(`${lines.join('\n')}\n`);
  const file = await storage.uploadViaImporter({
    name: 'sapi-temporal-receipt.csv',
    stream: Readable.from([csv]),
    sizeBytes: csv.length,
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
    checked.set(key, Date.now());
  } catch (err) {
    checked.delete(key);
    throw err;
  } finally {
    await storage.deleteFile({ fileId: file.id }).catch(() => undefined); // a leftover file is only clutter
  }
}

/**
 * The job once ended (polled every 0.2–2 s). It may serve the receipts of several activities: it sleeps on a plain
 * timer, not on one activity's context; each waiting activity keeps heartbeating (asActivity's keep-alive).
 */
async function ended(storage: StorageClient, job: Job): Promise<Job> {
  for (let delay = 200; job.status === 'waiting' || job.status === 'processing'; delay = Math.min(delay * 2, MAX_POLL_MS)) {
    await sleep(delay);
    job = await storage.getJob({ jobId: job.id });
  }
  return job;
}

function failure(job: Job, table: string): SapiJobError {
  const error = summarizeJob(job).error;
  return new SapiJobError({
    code: SapiErrorCode.JOB_FAILED,
    message: describeJobFailure({
      id: job.id,
      operationName: job.operationName,
      tableId: table,
      message: `the receipt's load job ended ${job.status}: ${error?.message ?? 'no message'}`,
      code: error?.code,
      exceptionId: error?.exceptionId,
    }),
    jobId: job.id,
    serviceCode: error?.code,
    exceptionId: error?.exceptionId,
  });
}

/** One CSV value, always enclosed (`"` doubled). */
function csvValue(value: string): string {
  return `"${value.replace(/"/g, '""')}"`;
}
