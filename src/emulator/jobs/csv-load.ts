import { type DuckDBConnection } from '@duckdb/node-api';
import { parse } from 'csv-parse';
import { JobError } from '../errors';
import { type FileRecord } from '../model';
import { type ObjectStore } from '../object-store';
import { TIMESTAMP_COLUMN, ident } from '../table-store';
import { csvParts } from './csv-source';

/** How the file is written and read (the import parameters that concern the CSV itself). */
export interface CsvDialect {
  delimiter: string;
  enclosure: string;
  escapedBy: string;
  /** The file has no header; these are its columns. */
  columns?: string[];
  /** The file has no header; its columns are `fallbackColumns` (the table's). */
  withoutHeaders: boolean;
  /** Records skipped at the start of the first part, before the header. */
  ignoredLinesCount: number;
  /** Values stored as empty strings (untyped tables have no NULL). */
  treatValuesAsNull: string[];
}

/** Column names the service accepts: letters, digits, underscore; 1–64 characters. */
const COLUMN_NAME = /^[A-Za-z0-9_]{1,64}$/;

export function validateColumnNames(names: string[], where: string): void {
  const invalid = names.filter((n) => !COLUMN_NAME.test(n) || n === TIMESTAMP_COLUMN);
  if (invalid.length) {
    throw new JobError(
      'storage.tables.invalidColumnName',
      `invalid column name(s) in ${where}: ${invalid.map((n) => JSON.stringify(n)).join(', ')}; names may contain only letters, digits and underscores, at most 64 characters, and "${TIMESTAMP_COLUMN}" is reserved`,
    );
  }
  const seen = new Set<string>();
  const duplicates = new Set<string>();
  for (const n of names) {
    const lower = n.toLowerCase();
    if (seen.has(lower)) duplicates.add(n);
    seen.add(lower);
  }
  if (duplicates.size) {
    throw new JobError('storage.tables.duplicateColumnName', `duplicate column name(s) in ${where}: ${[...duplicates].map((n) => JSON.stringify(n)).join(', ')}`);
  }
}

export interface StagingResult {
  columns: string[];
  rowsCount: number;
}

/**
 * Streams a stored file (gzip and sliced files included) through an RFC 4180 parser into a new staging table with
 * one VARCHAR column per CSV column. Any malformed input throws a {@link JobError} naming the part and line; the
 * caller drops the staging table. Memory stays bounded: records are appended as they are parsed.
 */
export async function loadCsvIntoStaging(input: {
  conn: DuckDBConnection;
  objects: ObjectStore;
  file: FileRecord;
  dialect: CsvDialect;
  schema: string;
  stagingName: string;
  fallbackColumns?: string[];
}): Promise<StagingResult> {
  const { conn, dialect } = input;
  const explicit = dialect.columns?.length ? dialect.columns : dialect.withoutHeaders ? input.fallbackColumns : undefined;
  if (dialect.withoutHeaders && !explicit) {
    throw new JobError('storage.tables.validation', 'withoutHeaders needs the table columns or a columns[] list: the file has no header to read them from');
  }
  if (explicit) validateColumnNames(explicit, 'the columns parameter');
  let columns: string[] | undefined = explicit;
  let appender: Awaited<ReturnType<DuckDBConnection['createAppender']>> | undefined;
  let rowsCount = 0;
  const nullValues = new Set(dialect.treatValuesAsNull);

  const startStaging = async (names: string[]): Promise<void> => {
    const defs = names.map((n) => `${ident(n)} VARCHAR`).join(', ');
    await conn.run(`CREATE TABLE ${ident(input.schema)}.${ident(input.stagingName)} (${defs})`);
    appender = await conn.createAppender(input.stagingName, input.schema);
  };
  if (columns) await startStaging(columns);

  const parts = await csvParts(input.objects, input.file);
  try {
    for (const part of parts) {
      const body = await part.open();
      const parser = parse({
        delimiter: dialect.delimiter,
        quote: dialect.enclosure === '' ? false : dialect.enclosure,
        escape: dialect.escapedBy || dialect.enclosure || null,
        bom: true,
        skip_empty_lines: true,
        relax_column_count: true,
        info: true,
        from_line: part.index === 0 ? dialect.ignoredLinesCount + 1 : 1,
      });
      body.on('error', (error) => parser.destroy(error));
      body.pipe(parser);
      let firstRecord = true;
      try {
        for await (const item of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
          const { record, info } = item;
          if (firstRecord) {
            firstRecord = false;
            if (!explicit) {
              if (!columns) {
                validateColumnNames(record, `the header of ${part.label}, line ${info.lines}`);
                columns = record;
                await startStaging(columns);
                continue;
              }
              // Later slices may repeat the header: skip it when it does.
              if (record.length === columns.length && record.every((v, i) => v === columns![i])) continue;
            }
          }
          if (record.length !== columns!.length) {
            throw new JobError(
              'storage.tables.invalidCsv',
              `${part.label}, line ${info.lines}: expected ${columns!.length} values (columns ${columns!.join(',')}), got ${record.length}; check the delimiter ${JSON.stringify(dialect.delimiter)} and the enclosure ${JSON.stringify(dialect.enclosure)}`,
            );
          }
          const app = appender!;
          for (const value of record) app.appendVarchar(nullValues.has(value) ? '' : value);
          app.endRow();
          rowsCount += 1;
        }
      } catch (error) {
        body.destroy();
        if (error instanceof JobError) throw error;
        throw new JobError('storage.tables.invalidCsv', `${part.label} is not valid CSV (RFC 4180): ${(error as Error).message}`);
      }
    }
    if (!columns) {
      throw new JobError('storage.tables.emptyFile', `file ${input.file.id} is empty: a header row with column names is expected (or pass columns[])`);
    }
  } finally {
    try {
      appender?.closeSync();
    } catch {
      // the load already failed, or the flush error surfaces in the merge
    }
  }
  return { columns, rowsCount };
}
