import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { type EmulatorContext } from '../context';
import { JobError } from '../errors';
import { type FileRecord, type JobRecord } from '../model';
import { formatTimestamp } from '../time';
import { type ExportOperationParams, exportSql } from './export-query';
import { storeSlices } from './slice-writer';
import { fileKey } from '../files';
import { sqlString } from './csv-shape';

/** Tag carried by every table export file. */
export const TABLE_EXPORT_TAG = 'table-export';

/** One RFC 4180 line, every value enclosed (like the service's exports). */
export function csvLine(values: readonly unknown[]): string {
  let line = '';
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    const s = v === null || v === undefined ? '' : String(v);
    line += (i ? ',"' : '"') + (s.includes('"') ? s.replace(/"/g, '""') : s) + '"';
  }
  return `${line}\n`;
}

/**
 * Writes the selected rows with DuckDB's own CSV writer (`COPY … TO`, every value enclosed, NULL as `""`) into a
 * local file, then stores it as headerless slices (every export, like a Snowflake stack's, with `slicedExports`; else
 * only one larger than a slice) or as one file with a header (see {@link storeSlices}) and registers it.
 */
export async function runTableExport(ctx: EmulatorContext, job: JobRecord): Promise<unknown> {
  const p = job.operationParams as unknown as ExportOperationParams;
  const tableId = `${p.bucketId}.${p.name}`;
  const table = ctx.tables.get(tableId);
  if (!table) throw new JobError('storage.tables.notFound', `table ${tableId} not found`);
  const missing = (p.columns ?? []).filter((c) => !table.columns.includes(c));
  if (missing.length) throw new JobError('storage.tables.columnNotFound', `columns ${missing.join(', ')} are not in table ${tableId}`);
  const { sql, columns } = exportSql(table, p, { text: true });
  const id = ctx.nextId('file');
  const created = formatTimestamp();
  const name = `${tableId}.csv${p.gzip ? '.gz' : ''}`;
  const key = fileKey(ctx, id, name, false, created);
  const rowsPath = join(ctx.tmpDir, `export-${job.id}.csv`);
  const conn = await ctx.tables.connect();
  let result: Awaited<ReturnType<typeof storeSlices>>;
  let rows = 0;
  try {
    const copied = await conn.runAndReadAll(
      `COPY (${sql}) TO ${sqlString(rowsPath)} (FORMAT csv, HEADER false, FORCE_QUOTE *, DELIMITER ',', QUOTE '"', ESCAPE '"', NEW_LINE '\n')`,
    );
    rows = Number(copied.getRowsJS()[0]?.[0] ?? 0);
    result = await storeSlices({
      objects: ctx.objects,
      key,
      path: rowsPath,
      sliceSizeBytes: ctx.sliceSizeBytes,
      gzip: p.gzip,
      header: csvLine(columns),
      tmpDir: ctx.tmpDir,
      id: String(job.id),
      alwaysSliced: ctx.slicedExports,
    });
  } finally {
    conn.closeSync();
    rmSync(rowsPath, { force: true });
  }
  const file: FileRecord = {
    id,
    created,
    name,
    key,
    isSliced: result.isSliced,
    isPublic: false,
    isEncrypted: true,
    isPermanent: false,
    tags: [TABLE_EXPORT_TAG],
    sizeBytes: result.sizeBytes,
    sizeMeasured: true,
    creatorToken: job.creatorToken,
    branchId: 'default',
    fileType: 'csv',
    runId: job.runId,
  };
  ctx.state.put('file', id, file);
  job.metrics.outBytes = result.sizeBytes;
  job.metrics.outCompressed = p.gzip;
  return { file: { id }, cacheHit: false, exportedRowsCount: rows };
}
