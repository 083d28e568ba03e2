import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import type { EmulatorHandle } from '../../../src/emulator';
import type { RequestLogEntry } from '../../../src/emulator/request-log';
import { DEFAULT_RECEIPTS_TABLE, receiptFromRow, type LoadReceipt } from '../../../src/contracts/receipts';

/** sha256 of rows (each a comma-joined line), sorted: equal multisets of rows give equal checksums. */
export function rowsChecksum(lines: string[]): string {
  return createHash('sha256')
    .update([...lines].sort().join('\n'))
    .digest('hex');
}

/** The data rows of a CSV without quotes or commas inside values (what the matrix generates and exports). */
export function csvRows(text: string, header: boolean): string[] {
  const lines = text.split('\n').filter((l) => l.length > 0);
  return (header ? lines.slice(1) : lines).map((l) => l.replace(/"/g, ''));
}

/** A table's rows as read from the emulator's DuckDB, as comma-joined lines in the table's column order. */
export async function tableRows(emulator: EmulatorHandle, tableId: string): Promise<string[]> {
  const table = await emulator.readTable(tableId);
  return table.rows.map((r) => r.join(','));
}

/** Writes `rows` lines of `id,payload` (about `rowBytes` each); with `from` the ids start there. */
export async function writeRows(path: string, rows: number, options: { header: boolean; from?: number; rowBytes?: number }): Promise<void> {
  const out = createWriteStream(path);
  if (options.header) out.write('id,payload\n');
  const pad = 'x'.repeat(Math.max(1, (options.rowBytes ?? 100) - 12));
  const from = options.from ?? 0;
  for (let i = from; i < from + rows; i++) {
    if (!out.write(`${i},${pad}${i % 97}\n`)) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  await new Promise<void>((r) => out.end(() => r()));
}

async function sapiGet<T>(emulator: EmulatorHandle, path: string): Promise<{ status: number; body: T }> {
  const res = await fetch(`${emulator.url}${path}`, { headers: { 'X-StorageApi-Token': emulator.token } });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
}

export interface JobInfo {
  id: number;
  status: string;
  operationName: string;
  tableId?: string;
  operationParams?: Record<string, unknown>;
}

/** Every job the service knows (`GET /v2/storage/jobs`), newest last. */
export async function listJobs(emulator: EmulatorHandle): Promise<JobInfo[]> {
  const { body } = await sapiGet<JobInfo[]>(emulator, '/v2/storage/jobs?limit=1000');
  return [...body].sort((a, b) => a.id - b.id);
}

export async function listFiles(emulator: EmulatorHandle): Promise<Array<{ id: number; name: string }>> {
  return (await sapiGet<Array<{ id: number; name: string }>>(emulator, '/v2/storage/files?limit=1000')).body;
}

export async function bucketExists(emulator: EmulatorHandle, bucketId: string): Promise<boolean> {
  return (await sapiGet(emulator, `/v2/storage/buckets/${bucketId}`)).status === 200;
}

export async function tableExists(emulator: EmulatorHandle, tableId: string): Promise<boolean> {
  return (await sapiGet(emulator, `/v2/storage/tables/${tableId}`)).status === 200;
}

/**
 * Requests that reached the operation and created something: answered 2xx, or performed and then answered with an
 * injected error or dropped; also those performed for a client that was gone (status 0 without a fault that
 * refuses the request). A 4xx without a fault or a refused request (`status`/`reset` fault) created nothing.
 */
export function creatingRequests(log: RequestLogEntry[], since: number, method: string, path: RegExp): RequestLogEntry[] {
  return log.filter((r) => {
    if (r.time < since || r.method !== method || !path.test(r.path)) return false;
    if (r.fault === 'status' || r.fault === 'reset') return false;
    if (r.fault === 'dropResponse' || r.fault === 'status-after-success') return true;
    return (r.status >= 200 && r.status < 300) || r.status === 0;
  });
}

/**
 * The receipts (rows of the receipts table, default `in.c-sapi-temporal.receipts`) whose `column` is `value`, as
 * receipts; none while the table does not exist.
 */
export async function receiptsWhere(
  emulator: EmulatorHandle,
  column: 'workflow_id' | 'origin_workflow_id' | 'table_id',
  value: string,
  receiptsTable = DEFAULT_RECEIPTS_TABLE,
): Promise<LoadReceipt[]> {
  if (!(await tableExists(emulator, receiptsTable))) return [];
  const table = await emulator.readTable(receiptsTable);
  return table.rows.map((row) => receiptFromRow(Object.fromEntries(table.columns.map((c, i) => [c, row[i]!])))).filter((r) => r[columnKey[column]] === value);
}

const columnKey = { workflow_id: 'workflowId', origin_workflow_id: 'originWorkflowId', table_id: 'tableId' } as const;
