import { type DuckDBConnection } from '@duckdb/node-api';
import { parse } from 'csv-parse';
import { JobError } from '../errors';
import { type FileRecord } from '../model';
import { type ObjectStore } from '../object-store';
import { TIMESTAMP_COLUMN, ident } from '../table-store';
import { csvParts } from './csv-source';
import { Utf8Check } from './utf8-check';

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
 * one VARCHAR column per CSV column. Any malformed input (invalid UTF-8 included) throws a {@link JobError} naming the part and line; the
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
      // Invalid UTF-8 fails the load (the parser alone would store U+FFFD), checked as the bytes flow to the parser.
      const utf8 = new Utf8Check(part.label);
      const fromLine = part.index === 0 ? dialect.ignoredLinesCount + 1 : 1;
      const parser = parse({
        delimiter: dialect.delimiter,
        quote: dialect.enclosure === '' ? false : dialect.enclosure,
        escape: dialect.escapedBy || dialect.enclosure || null,
        bom: true,
        skip_empty_lines: true,
        // The parser checks every record against the first one's length and names the line when they differ
        // (`info: true` would give per-record lines but halves the throughput); the first record is checked here.
        relax_column_count: false,
        from_line: fromLine,
      });
      await new Promise<void>((resolve, reject) => {
        let firstRecord = true;
        let failed = false;
        const fail = (error: unknown): void => {
          if (failed) return;
          failed = true;
          body.destroy();
          utf8.destroy();
          parser.destroy();
          reject(error instanceof JobError ? error : new JobError('storage.tables.invalidCsv', `${part.label} is not valid CSV (RFC 4180): ${(error as Error).message}`));
        };
        parser.on('data', (record: string[]) => {
          if (failed) return;
          try {
            if (firstRecord) {
              firstRecord = false;
              if (!explicit) {
                if (!columns) {
                  validateColumnNames(record, `the header of ${part.label}, line ${fromLine}`);
                  columns = record;
                  parser.pause();
                  startStaging(columns).then(() => parser.resume(), fail);
                  return;
                }
                // Later slices may repeat the header: skip it when it does.
                if (record.length === columns.length && record.every((v, i) => v === columns![i])) return;
              }
            }
            if (rowsCount === 0 && record.length !== columns!.length) {
              throw new JobError(
                'storage.tables.invalidCsv',
                `${part.label}, first data record (line ${fromLine} or later): expected ${columns!.length} values (columns ${columns!.join(',')}), got ${record.length}; check the delimiter ${JSON.stringify(dialect.delimiter)} and the enclosure ${JSON.stringify(dialect.enclosure)}`,
              );
            }
            const app = appender!;
            for (const value of record) app.appendVarchar(nullValues.size && nullValues.has(value) ? '' : value);
            app.endRow();
            rowsCount += 1;
          } catch (error) {
            fail(error);
          }
        });
        parser.on('error', fail);
        body.on('error', fail);
        utf8.on('error', fail);
        parser.on('end', () => {
          if (!failed) resolve();
        });
        body.pipe(utf8).pipe(parser);
      });
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
