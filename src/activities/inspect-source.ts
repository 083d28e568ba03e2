import { Context } from '@temporalio/activity';
import { type Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { parse } from 'csv-parse';
import { SapiInvalidInputError } from '../errors';
import { MAX_TABLE_COLUMNS, columnNameProblems } from '../storage-api/columns';
import type { CsvDialect } from '../contracts/transfer';
import type { ActivityDeps } from './deps';
import { asActivity } from './context';

export interface InspectSourceInput {
  /** The source, or the slices of a sliced upload. */
  sources: string[];
  csv?: CsvDialect;
  /** Columns of headerless sources: checked instead of a header row. */
  columns?: string[];
  /** The columns of the typed table the run creates: the header (or `columns`) must name exactly these, in any order. */
  expectColumns?: string[];
  /** The worker's grant for a staged file it built (an extraction's load): see `activities/confine.ts`. */
  sourceGrant?: string;
}

export interface InspectSourceResult {
  /** Bytes of all sources, when known. */
  bytes?: number;
  /** The header row of the (first) source, or `columns`. */
  columns: string[];
}

/** Bytes read at most to find the header row. Default 1 MiB. */
export const HEADER_PROBE_BYTES = 1024 * 1024;

/**
 * Checks an import's sources before anything is created or uploaded: each one readable and not empty, and the
 * header row (or the `columns` of headerless sources) made of names the service accepts, with no duplicates. A
 * wrong delimiter shows here as one column whose name holds the real delimiter. Fails with a non-retryable
 * `SAPI_INVALID_INPUT` naming the source. Runs where the sources are readable (the transfer task queue).
 */
export function inspectSource(deps: ActivityDeps) {
  return (input: InspectSourceInput): Promise<InspectSourceResult> => asActivity(() => inspect(deps, input));
}

/** The body of {@link inspectSource}, for activities that inspect as one of their steps. */
export async function inspect(deps: ActivityDeps, input: InspectSourceInput): Promise<InspectSourceResult> {
  const signal = Context.current().cancellationSignal;
  let bytes: number | undefined = 0;
  let header: string[] | undefined;
  for (const [i, uri] of input.sources.entries()) {
    const field = input.sources.length > 1 ? `slices[${i}]` : 'source';
    const source = await deps.confinement.openSource(uri, field, { signal, grant: input.sourceGrant });
    bytes = bytes === undefined || source.size === undefined ? undefined : bytes + source.size;
    if (source.size === 0) throw new SapiInvalidInputError(`source ${source.description} is empty (0 bytes): a CSV needs at least a header row`);
    if (i === 0 && !input.columns?.length) {
      header = await readHeader(await source.open(0, signal), input.csv ?? {});
      if (header === undefined) throw new SapiInvalidInputError(`source ${source.description} is empty: a CSV needs at least a header row`);
    }
  }
  const columns = input.columns?.length ? input.columns : (header ?? []);
  if (columns.length > MAX_TABLE_COLUMNS) {
    const where = input.columns?.length ? 'the columns parameter' : `the header of ${input.sources[0]}`;
    throw new SapiInvalidInputError(
      `${where} has ${columns.length} columns; a table may have at most ${MAX_TABLE_COLUMNS} (the service refuses more with "Too many columns"): split the file into narrower tables`,
    );
  }
  const problems = columnNameProblems(columns);
  if (problems.length) {
    const where = input.columns?.length ? 'the columns parameter' : `the header of ${input.sources[0]}`;
    const delimiter = input.csv?.delimiter ?? ',';
    const hint = columns.length === 1 && /[;\t|,]/.test(columns[0]!) ? ` (one column: is the delimiter ${JSON.stringify(delimiter)} right?)` : '';
    throw new SapiInvalidInputError(`${where}: ${problems.join('; ')}${hint}`);
  }
  if (input.expectColumns) {
    const missing = input.expectColumns.filter((c) => !columns.includes(c));
    const extra = columns.filter((c) => !input.expectColumns!.includes(c));
    if (missing.length || extra.length) {
      const where = input.columns?.length ? 'the columns parameter' : `the header of ${input.sources[0]}`;
      throw new SapiInvalidInputError(
        `${where} (${columns.join(', ')}) does not match the typed columns (${input.expectColumns.join(', ')})` +
          `${missing.length ? `: missing ${missing.join(', ')}` : ''}${extra.length ? `${missing.length ? ';' : ':'} not defined ${extra.join(', ')}` : ''}; ` +
          'define a type for every column of the file, and only those',
      );
    }
  }
  return { bytes, columns };
}

/** The first record of a CSV stream (gzip detected by its magic bytes), or undefined for an empty one. */
async function readHeader(stream: Readable, csv: CsvDialect): Promise<string[] | undefined> {
  const quote = csv.escapedBy !== undefined ? false : csv.enclosure === '' ? false : (csv.enclosure ?? '"');
  // a plain file is read until its first record is complete (a gzipped one: the probe, inflated)
  const head = await readPrefix(stream, HEADER_PROBE_BYTES, (bytes) => bytes[0] !== 0x1f && firstRecordBytes(bytes, quote) !== bytes);
  const text = firstRecordBytes(head[0] === 0x1f && head[1] === 0x8b ? await gunzipPrefix(head) : head, quote).toString('utf8');
  if (text.trim() === '') return undefined;
  const parser = parse({
    delimiter: csv.delimiter ?? ',',
    quote,
    escape: csv.escapedBy ?? csv.enclosure ?? '"',
    to_line: 1,
    relax_column_count: true,
    bom: true,
  });
  const records: string[][] = [];
  parser.on('data', (record: string[]) => records.push(record));
  const done = new Promise<void>((resolve, reject) => {
    parser.on('end', resolve);
    parser.on('error', reject);
  });
  parser.end(text);
  try {
    await done;
  } catch {
    // the prefix may end inside a quoted field of a later record; a header the parser rejects is checked as one name
    if (records[0]) return records[0];
    return [text.split(/\r?\n/, 1)[0]!];
  }
  return records[0];
}

/**
 * The bytes of a CSV that hold its first record: up to the first line feed outside an enclosed field, unless that
 * line is blank; all of `head` when there is none (or the enclosure is not one ASCII character). The header is then
 * decoded and parsed from these bytes only, not from the whole probe (of a small file: all of it).
 */
export function firstRecordBytes(head: Buffer, quote: string | false): Buffer {
  const q = quote === false || quote === '' ? -1 : quote.length === 1 && quote.charCodeAt(0) < 0x80 ? quote.charCodeAt(0) : undefined;
  if (q === undefined) return head;
  let enclosed = false;
  for (let i = 0; i < head.length; i++) {
    const byte = head[i];
    if (byte === q)
      enclosed = !enclosed; // a doubled enclosure inside a field toggles twice
    else if (byte === 0x0a && !enclosed) {
      const line = head.subarray(0, i + 1);
      return line.toString('utf8').trim() === '' ? head : line;
    }
  }
  return head;
}

/** The first `max` bytes of `stream`, or only its first chunk when `enough` says that one suffices. */
async function readPrefix(stream: Readable, max: number, enough: (bytes: Buffer) => boolean = () => false): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    chunks.push(chunk as Buffer);
    size += (chunk as Buffer).length;
    // judged on the first chunk only (a header longer than a chunk is rare: the probe is read as before)
    if (size >= max || (chunks.length === 1 && enough(chunks[0]!))) break;
  }
  stream.destroy();
  return Buffer.concat(chunks).subarray(0, max);
}

async function gunzipPrefix(data: Buffer): Promise<Buffer> {
  return new Promise((resolve) => {
    const gunzip = createGunzip();
    const out: Buffer[] = [];
    gunzip.on('data', (c: Buffer) => out.push(c));
    // a cut-off gzip stream ends with an error: what was inflated so far is all we need
    gunzip.on('error', () => resolve(Buffer.concat(out)));
    gunzip.on('end', () => resolve(Buffer.concat(out)));
    gunzip.end(data);
  });
}
