import { rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { type DuckDBConnection } from '@duckdb/node-api';
import { parse } from 'csv-parse';
import { JobError, TOO_MANY_COLUMNS, tooManyColumnsMessage } from '../errors';
import { type FileRecord } from '../model';
import { type ObjectStore } from '../object-store';
import { TIMESTAMP_COLUMN, ident } from '../table-store';
import { type BulkDialect, BulkRefused, CsvShapeCheck, bulkDialect, firstRecord, readCsvSql, sqlString } from './csv-shape';
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
    throw new JobError(
      'storage.tables.duplicateColumnName',
      `duplicate column name(s) in ${where}: ${[...duplicates].map((n) => JSON.stringify(n)).join(', ')}`,
    );
  }
}

/** Refuses more than `max` columns, as the service does, before anything is created for them. */
export function checkColumnCount(count: number, max: number, where: string, more = false): void {
  if (count > max) throw new JobError(TOO_MANY_COLUMNS, tooManyColumnsMessage(max, where, more ? `more than ${count}` : count));
}

/**
 * The staging table of a load: one VARCHAR column per CSV column (default '', as a table's columns have) and the
 * table's `_timestamp`, so that a new table without a primary key is the staging table renamed, with no statement per
 * column (DuckDB keeps a copy of the table's catalog entry per ALTER until the commit: O(columns²) memory).
 */
export function stagingTableSql(ref: string, names: string[]): string {
  return `CREATE TABLE ${ref} (${[...names.map((n) => `${ident(n)} VARCHAR DEFAULT ''`), `${ident(TIMESTAMP_COLUMN)} BIGINT`].join(', ')})`;
}

/** Longest record the reference parser buffers (characters), so that one endless record cannot take the memory. */
export const MAX_RECORD_CHARS = 64 * 1024 * 1024;

export interface StagingResult {
  columns: string[];
  rowsCount: number;
  /** Which reader loaded the file: DuckDB's `read_csv` after the subset check (`bulk`), or the reference parser. */
  reader: CsvReader;
}

/** `bulk`: checked byte by byte, then DuckDB's `read_csv`; `parser`: csv-parse record by record (the reference). */
export type CsvReader = 'bulk' | 'parser';

export interface LoadCsvInput {
  conn: DuckDBConnection;
  objects: ObjectStore;
  file: FileRecord;
  dialect: CsvDialect;
  schema: string;
  stagingName: string;
  /** Where the bulk path writes the checked records for `read_csv` (one temp file, removed afterwards). */
  tmpDir: string;
  fallbackColumns?: string[];
  /** Most columns the file may have ({@link checkColumnCount}). */
  maxColumns: number;
  /** `_timestamp` of the staged rows (epoch ms). */
  timestamp: number;
  /** Force one reader (tests); default: bulk when the dialect allows, the parser when bulk refuses the file. */
  reader?: CsvReader;
}

/**
 * Loads a stored file (gzip and sliced files included) into a new staging table with one VARCHAR column per CSV
 * column. Two readers give the same rows: the bulk path (a byte-level check of a strict RFC 4180 subset while the
 * content is copied to a temp file, then DuckDB's parallel `read_csv`; ~3× faster in one measurement) and the reference parser
 * (csv-parse). A file the bulk path refuses, or any failure on it, is loaded again by the parser, which alone names
 * the errors (line of a malformed row, invalid UTF-8), so messages are the same whichever path ran first.
 */
export async function loadCsvIntoStaging(input: LoadCsvInput): Promise<StagingResult> {
  const explicit = explicitColumns(input);
  const bulk = bulkDialect(input.dialect);
  if (input.reader !== 'parser' && bulk) {
    try {
      return await loadBulk(input, bulk, explicit);
    } catch (error) {
      if (input.reader === 'bulk' || (error instanceof JobError && error.code === TOO_MANY_COLUMNS)) throw error;
      // refused, or failed on the way: the parser loads it again and names any error in the file
      await input.conn.run(`DROP TABLE IF EXISTS ${ident(input.schema)}.${ident(input.stagingName)}`);
    }
  } else if (input.reader === 'bulk') {
    throw new BulkRefused(`the dialect ${JSON.stringify(input.dialect)} is outside the bulk path's subset`);
  }
  return loadParsed(input, explicit);
}

/** The columns given instead of a header (`columns[]`, or the table's with `withoutHeaders`), checked. */
function explicitColumns(input: LoadCsvInput): string[] | undefined {
  const { dialect } = input;
  const explicit = dialect.columns?.length ? dialect.columns : dialect.withoutHeaders ? input.fallbackColumns : undefined;
  if (dialect.withoutHeaders && !explicit) {
    throw new JobError('storage.tables.validation', 'withoutHeaders needs the table columns or a columns[] list: the file has no header to read them from');
  }
  if (explicit) {
    checkColumnCount(explicit.length, input.maxColumns, 'The columns parameter');
    validateColumnNames(explicit, 'the columns parameter');
  }
  return explicit;
}

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
/** A header (first record) longer than this is left to the parser. */
const MAX_HEAD_BYTES = 1024 * 1024;

/**
 * The bulk path: each part through the UTF-8 check and {@link CsvShapeCheck} into one headerless temp file (BOM,
 * header and repeated headers of later slices left out), then one `INSERT … SELECT … FROM read_csv(…)` that keeps
 * the file's order. Throws {@link BulkRefused} (or any error) for the caller to fall back on the parser.
 */
async function loadBulk(input: LoadCsvInput, dialect: BulkDialect, explicit: string[] | undefined): Promise<StagingResult> {
  const { conn } = input;
  const path = join(input.tmpDir, `load-${input.schema}-${input.stagingName}.csv`.replace(/[^A-Za-z0-9._-]/g, '_'));
  const out = await open(path, 'w');
  const write = async (buf: Uint8Array): Promise<void> => {
    if (buf.length) await out.write(buf);
  };
  let columns = explicit;
  let check = columns ? new CsvShapeCheck(dialect, columns.length) : undefined;
  try {
    for (const part of await csvParts(input.objects, input.file)) {
      const body = await part.open();
      const utf8 = new Utf8Check(part.label);
      body.on('error', (error) => utf8.destroy(error));
      // errors reach the loop through the iterator; this keeps one raised after the loop let go (destroyed
      // mid-pipe) from being uncaught
      utf8.on('error', () => undefined);
      const chunks = body.pipe(utf8)[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
      try {
        // The part's first record: the header (part 0), a repeated header (skipped), or data.
        let head: Buffer = Buffer.alloc(0);
        let first: ReturnType<typeof firstRecord>;
        let ended = false;
        for (;;) {
          const next = await chunks.next();
          if (next.done) ended = true;
          else head = head.length ? Buffer.concat([head, next.value]) : next.value;
          if (head.length < BOM.length && !ended) continue;
          if (head.subarray(0, BOM.length).equals(BOM)) head = head.subarray(BOM.length);
          first = head.length ? firstRecord(head, dialect, ended) : undefined;
          if (first || ended) break;
          if (head.length > MAX_HEAD_BYTES) {
            // a header this long is refused on its width at once (delimiters counted as if nothing were quoted)
            if (!columns) checkColumnCount(countByte(head, dialect.delimiter) + 1, input.maxColumns, `The header of ${part.label}`, true);
            throw new BulkRefused('a first record longer than 1 MiB');
          }
        }
        if (!first) throw new BulkRefused(`${part.label} is empty`);
        let from = 0;
        if (!columns) {
          checkColumnCount(first.values.length, input.maxColumns, `The header of ${part.label}`);
          validateColumnNames(first.values, `the header of ${part.label}, line 1`);
          columns = first.values;
          check = new CsvShapeCheck(dialect, columns.length);
          from = first.end;
        } else if (!explicit && first.values.length === columns.length && first.values.every((v, i) => v === columns![i])) {
          from = first.end; // later slices may repeat the header
        }
        const shape = check!;
        shape.push(head, from);
        await write(head.subarray(from));
        let last = head.length > from ? head[head.length - 1]! : 0x0a;
        while (!ended) {
          const next = await chunks.next();
          if (next.done) break;
          shape.push(next.value);
          await write(next.value);
          if (next.value.length) last = next.value[next.value.length - 1]!;
        }
        shape.end();
        // parts are read one after another: a part's last record must not run into the next part's first
        if (last !== 0x0a) await write(Buffer.from('\n'));
      } finally {
        body.destroy();
        utf8.destroy();
      }
    }
    await out.close();
    if (!columns || !check) throw new BulkRefused('no header');
    const names = columns;
    const staging = `${ident(input.schema)}.${ident(input.stagingName)}`;
    await conn.run(stagingTableSql(staging, names));
    if (check.records > 0) {
      const nulls = input.dialect.treatValuesAsNull;
      // untyped tables have no NULL: csv-parse gives '' for an empty value, quoted or not, and for treatValuesAsNull
      const value = (i: number): string =>
        nulls.length ? `CASE WHEN c${i} IN (${nulls.map(sqlString).join(', ')}) THEN '' ELSE coalesce(c${i}, '') END` : `coalesce(c${i}, '')`;
      await conn.run(
        `INSERT INTO ${staging} SELECT ${names.map((_, i) => value(i)).join(', ')}, ${Math.floor(input.timestamp)} FROM ${readCsvSql(path, dialect, names.length)}`,
      );
    }
    return { columns: names, rowsCount: check.records, reader: 'bulk' };
  } finally {
    await out.close().catch(() => undefined); // closed already unless the load failed on the way
    rmSync(path, { force: true });
  }
}

/** How many times `byte` occurs in `buf`. */
function countByte(buf: Buffer, byte: number): number {
  let count = 0;
  for (let at = buf.indexOf(byte); at !== -1; at = buf.indexOf(byte, at + 1)) count += 1;
  return count;
}

/**
 * The reference path: csv-parse record by record into the staging table through an appender. Any malformed input
 * (invalid UTF-8 included) throws a {@link JobError} naming the part and line; the caller drops the staging table.
 * Memory stays bounded: records are appended as they are parsed.
 */
async function loadParsed(input: LoadCsvInput, explicit: string[] | undefined): Promise<StagingResult> {
  const { conn, dialect } = input;
  let columns: string[] | undefined = explicit;
  let appender: Awaited<ReturnType<DuckDBConnection['createAppender']>> | undefined;
  let rowsCount = 0;
  const nullValues = new Set(dialect.treatValuesAsNull);

  const timestamp = BigInt(Math.floor(input.timestamp));
  const startStaging = async (names: string[]): Promise<void> => {
    await conn.run(stagingTableSql(`${ident(input.schema)}.${ident(input.stagingName)}`, names));
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
        max_record_size: MAX_RECORD_CHARS,
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
          reject(
            error instanceof JobError
              ? error
              : new JobError('storage.tables.invalidCsv', `${part.label} is not valid CSV (RFC 4180): ${(error as Error).message}`),
          );
        };
        parser.on('data', (record: string[]) => {
          if (failed) return;
          try {
            if (firstRecord) {
              firstRecord = false;
              if (!explicit) {
                if (!columns) {
                  checkColumnCount(record.length, input.maxColumns, `The header of ${part.label}`);
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
            app.appendBigInt(timestamp);
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
  return { columns, rowsCount, reader: 'parser' };
}
