// What `receipts` and `verify` do (loaded on first use: the Storage client).
import { connectionFor, loadSettings } from '../config';
import { DEFAULT_RECEIPTS_TABLE, RECEIPTS_TABLE_PATTERN, receiptFromRow, type LoadReceipt } from '../contracts/receipts';
import { formatBytes } from '../contracts/search-attributes';
import { inContext, isSapiError, SapiErrorCode, SapiInvalidInputError } from '../errors';
import { createStorageClient, PREVIEW_MAX_ROWS, type StorageClient } from '../storage-api';
import { CliError } from './failure';

/** What `receipts` and `verify` take besides their own argument. */
export interface ReceiptsFlags {
  /** The receipts table (default: `SAPI_RECEIPTS_TABLE`, else `in.c-sapi-temporal.receipts`). */
  receiptsTable?: string;
  connection?: string;
  json?: boolean;
}

/** Reads receipts and tables: the receipts table, its rows by a column's value, a table's row count. */
interface ReceiptsReader {
  receiptsTable: string;
  /** Receipts whose `column` equals `value`, newest first (at most `limit`). */
  where(column: 'table_id' | 'workflow_id' | 'origin_workflow_id', value: string, limit?: number): Promise<LoadReceipt[]>;
  /** The table's row count, or null when it does not exist. */
  rowsOf(tableId: string): Promise<number | null>;
}

/** A reader over the Storage API, with the connection and receipts table of the environment and the flags. */
export function receiptsReader(env: NodeJS.ProcessEnv, flags: ReceiptsFlags): ReceiptsReader {
  const settings = loadSettings(env);
  const receiptsTable = flags.receiptsTable ?? settings.receiptsTable;
  if (receiptsTable === null) {
    throw new SapiInvalidInputError(
      `receipts are off here (SAPI_RECEIPTS_TABLE=off): name the receipts table with --receipts-table (e.g. ${DEFAULT_RECEIPTS_TABLE})`,
    );
  }
  if (!RECEIPTS_TABLE_PATTERN.test(receiptsTable))
    throw new SapiInvalidInputError(`--receipts-table must be a table id like ${DEFAULT_RECEIPTS_TABLE}, got ${JSON.stringify(receiptsTable)}`);
  const { url, token, branchId } = connectionFor(settings, flags.connection);
  return storageReader(createStorageClient({ url, token, branchId }), receiptsTable);
}

/** {@link ReceiptsReader} over a Storage client. */
function storageReader(storage: StorageClient, receiptsTable: string): ReceiptsReader {
  return {
    receiptsTable,
    async where(column, value, limit = PREVIEW_MAX_ROWS) {
      try {
        const preview = await storage.previewTable({
          tableId: receiptsTable,
          whereFilters: [{ column, values: [value] }],
          orderBy: [{ column: 'ended_at', order: 'DESC' }],
          limit,
        });
        return preview.rows.map(receiptFromRow);
      } catch (err) {
        if (isSapiError(err) && err.code === SapiErrorCode.NOT_FOUND) {
          throw inContext(err, `receipts table ${receiptsTable} not found: no load has written a receipt there yet (or name another with --receipts-table)`);
        }
        throw err;
      }
    },
    async rowsOf(tableId) {
      try {
        return (await storage.getTable({ tableId })).rowsCount ?? 0;
      } catch (err) {
        if (isSapiError(err) && err.code === SapiErrorCode.NOT_FOUND) return null;
        throw err;
      }
    },
  };
}

/** `receipts --table T`: its receipts, newest first (text: one line each; `--json`: an object). */
export async function listReceipts(reader: ReceiptsReader, table: string, flags: { json?: boolean; limit?: number }): Promise<string> {
  const receipts = await reader.where('table_id', table, Math.min(flags.limit ?? PREVIEW_MAX_ROWS, PREVIEW_MAX_ROWS));
  if (flags.json) return JSON.stringify({ table, receiptsTable: reader.receiptsTable, receipts });
  if (!receipts.length) return `no receipts of loads into ${table} in ${reader.receiptsTable}`;
  return receipts.map(receiptLine).join('\n');
}

/** One receipt as a line: when, mode, rows, bytes, job, file, run, source. */
export function receiptLine(r: LoadReceipt): string {
  const run = r.originWorkflowId !== r.workflowId ? `${r.originWorkflowId} (load ${r.workflowId})` : r.workflowId;
  const range = r.source.range ? ` ${JSON.stringify(r.source.range)}` : '';
  return `${r.endedAt}  ${r.mode.padEnd(11)} ${String(r.rows).padStart(9)} rows  ${formatBytes(r.bytes).padStart(8)}  job ${r.jobId}  file ${r.fileId}  run ${run}  ${r.source.kind} ${r.source.location}${range}`;
}

/** One table's check of `verify`. */
interface VerifyCheck {
  tableId: string;
  receiptId: string;
  mode: LoadReceipt['mode'];
  receiptRows: number;
  /** The table's row count now (null: the table is gone). */
  tableRows: number | null;
  /**
   * `ok`: a full load's table holds exactly its rows (or, with incremental loads after it, no more than they all
   * brought); `mismatch`; `missing` (the table is gone); `superseded` (a later full load replaced the rows: recount
   * that run); `unverifiable` (an incremental load into a table whose earlier rows have no receipt).
   */
  status: 'ok' | 'mismatch' | 'missing' | 'superseded' | 'unverifiable';
  detail: string;
}

/**
 * Checks one receipt against its table's rows now. Rows only come from loads, so: with no load after it, a full load
 * (`create`/`full`) leaves exactly its rows; incremental loads since the last full one leave at most the sum of theirs
 * and the full one's (an upsert may replace rows, never add more than it loaded). A later full load replaces what
 * this one loaded: `superseded`. An incremental load with no receipted full load before it cannot be bounded.
 */
export function checkReceipt(r: LoadReceipt, tableRows: number | null, tableReceipts: readonly LoadReceipt[]): VerifyCheck {
  const base = { tableId: r.tableId, receiptId: r.receiptId, mode: r.mode, receiptRows: r.rows, tableRows };
  if (tableRows === null) return { ...base, status: 'missing', detail: `${r.tableId} does not exist any more` };
  const isFull = (x: LoadReceipt) => x.mode !== 'incremental';
  // oldest first; the receipt itself included
  const ordered = [...tableReceipts.filter((x) => x.receiptId !== r.receiptId), r].sort((a, b) => a.endedAt.localeCompare(b.endedAt));
  const at = ordered.findIndex((x) => x.receiptId === r.receiptId);
  const later = ordered.slice(at + 1);
  const replaced = later.find(isFull);
  if (replaced)
    return {
      ...base,
      status: 'superseded',
      detail: `a later full load (run ${replaced.originWorkflowId}, job ${replaced.jobId}, ${replaced.endedAt}) replaced these rows: verify that run`,
    };
  const fullAt = isFull(r) ? at : ordered.slice(0, at).map(isFull).lastIndexOf(true);
  if (fullAt === -1)
    return {
      ...base,
      status: 'unverifiable',
      detail: `no receipted full load of ${r.tableId} before this incremental one: its earlier rows came from elsewhere`,
    };
  const since = ordered.slice(fullAt);
  if (since.length === 1) {
    const ok = tableRows === r.rows;
    return {
      ...base,
      status: ok ? 'ok' : 'mismatch',
      detail: `${r.tableId} has ${tableRows} rows, the ${r.mode === 'create' ? 'create' : 'full load'} (job ${r.jobId}) loaded ${r.rows}`,
    };
  }
  const bound = since.reduce((sum, x) => sum + x.rows, 0);
  const ok = tableRows <= bound;
  return {
    ...base,
    status: ok ? 'ok' : 'mismatch',
    detail: `${r.tableId} has ${tableRows} rows; the ${since.length} receipted loads since its last full load brought ${bound} (an upsert may replace rows, never add more)`,
  };
}

/** `verify --run <id>`: every table the run (or its load children) loaded, recounted against the receipts. */
export async function verifyRun(reader: ReceiptsReader, run: string, flags: { json?: boolean }): Promise<string> {
  const own = await reader.where('workflow_id', run);
  const children = await reader.where('origin_workflow_id', run);
  const receipts = [...new Map([...own, ...children].map((r) => [r.receiptId, r])).values()];
  if (!receipts.length)
    throw new CliError(
      SapiErrorCode.CLI_VERIFY_FAILED,
      `no receipts of run ${run} in ${reader.receiptsTable} (a run writes one per table load that ended well)`,
    );
  const checks: VerifyCheck[] = [];
  for (const r of receipts) checks.push(checkReceipt(r, await reader.rowsOf(r.tableId), await reader.where('table_id', r.tableId)));
  const failed = checks.filter((c) => c.status === 'mismatch' || c.status === 'missing');
  const report = { run, receiptsTable: reader.receiptsTable, ok: failed.length === 0, checks };
  if (failed.length) {
    throw new CliError(SapiErrorCode.CLI_VERIFY_FAILED, `verify ${run}: ${failed.map((c) => `${c.status} ${c.detail}`).join('; ')}`, undefined, {
      details: { checks },
    });
  }
  if (flags.json) return JSON.stringify(report);
  return [
    `verify ${run}: ${checks.length} load${checks.length === 1 ? '' : 's'} checked, none failed`,
    ...checks.map((c) => `${c.status.padEnd(12)} ${c.detail}`),
  ].join('\n');
}
