import { type EmulatorContext } from '../context';
import { JobError } from '../errors';
import { type FileRecord, type JobRecord } from '../model';
import { formatTimestamp } from '../time';
import { type ExportOperationParams, exportSql } from './export-query';
import { SliceWriter } from './slice-writer';
import { fileKey } from '../files';

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

/** Streams the selected rows out of DuckDB chunk by chunk into a file (sliced when large) and registers it. */
export async function runTableExport(ctx: EmulatorContext, job: JobRecord): Promise<unknown> {
  const p = job.operationParams as unknown as ExportOperationParams;
  const tableId = `${p.bucketId}.${p.name}`;
  const table = ctx.tables.get(tableId);
  if (!table) throw new JobError('storage.tables.notFound', `table ${tableId} not found`);
  const missing = (p.columns ?? []).filter((c) => !table.columns.includes(c));
  if (missing.length) throw new JobError('storage.tables.columnNotFound', `columns ${missing.join(', ')} are not in table ${tableId}`);
  const { sql, columns } = exportSql(table, p);
  const id = ctx.nextId('file');
  const created = formatTimestamp();
  const name = `${tableId}.csv${p.gzip ? '.gz' : ''}`;
  const key = fileKey(ctx, id, name, false, created);
  const writer = new SliceWriter({ objects: ctx.objects, key, sliceSizeBytes: ctx.sliceSizeBytes, gzip: p.gzip, header: csvLine(columns), tmpDir: ctx.tmpDir, id: String(job.id) });
  const conn = await ctx.tables.connect();
  let result: Awaited<ReturnType<SliceWriter['finish']>>;
  let rows = 0;
  try {
    const stream = await conn.stream(sql);
    for (;;) {
      const chunk = await stream.fetchChunk();
      if (!chunk || chunk.rowCount === 0) break;
      const data = chunk.getColumns();
      for (let r = 0; r < chunk.rowCount; r++) {
        const wait = writer.write(csvLine(data.map((col) => col[r])));
        if (wait) await wait;
      }
      rows += chunk.rowCount;
    }
    result = await writer.finish();
  } catch (error) {
    writer.abort();
    throw error;
  } finally {
    conn.closeSync();
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
