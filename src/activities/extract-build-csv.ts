import { Context } from '@temporalio/activity';
import { alignRow, csvLine } from '../extractor/table-schema';
import type { ActivityDeps } from './deps';
import { asActivity, heartbeat } from './context';
import { assertOwnRunKey } from './ownership';
import { csvKey, pagesPrefix, parsePageKey, readText, readableOf, stageStoreOf, writeStream } from '../object-storage/stage-store';

/** Staged pages read ahead while the CSV is written (memory ≈ this × one page's rows). */
const CSV_READ_AHEAD = 16;
/** CSV text buffered before it is handed to the writer. */
const CHUNK_CHARS = 256 * 1024;

export interface BuildTableCsvInput {
  runKey: string;
  /** Safe table name (as staged). */
  table: string;
  /** The table's flattened keys, in column order (the workflow's schema). */
  keys: string[];
  /** Header names aligned with `keys`, then any extra columns (an existing table's columns we lack: empty values). */
  columns: string[];
}

export interface BuildTableCsvResult {
  /** `s3://…` or a path on this worker's host. */
  uri: string;
  /** The worker's grant to read `uri` back as an import's source (staged files are never read by naming them). */
  grant: string;
  rows: number;
  bytes: number;
  /** Staged page objects read. */
  pages: number;
}

/**
 * Builds the CSV of one table from the staged pages of an extraction, in extraction order (job run, then page):
 * every row re-aligned to the final column union, every field quoted. Streams: memory is bounded by the read-ahead,
 * not by the table size. A retry builds the whole file again (it replaces the object, so rows never double).
 */
export function buildTableCsv(deps: ActivityDeps) {
  return (input: BuildTableCsvInput): Promise<BuildTableCsvResult> =>
    asActivity(async () => {
      await assertOwnRunKey(input.runKey, 'runKey');
      const context = Context.current();
      const store = stageStoreOf(deps);
      const keys = (await store.list(pagesPrefix(input.runKey))).filter((key) => parsePageKey(key)?.table === input.table);
      const extra = input.columns.length - input.keys.length;
      const padding: string[] = Array.from({ length: Math.max(0, extra) }, () => '');
      let rows = 0;
      let bytes = 0;
      let done = 0;
      const timer = setInterval(() => heartbeat({ pages: done, of: keys.length }, context), 5_000);

      async function* csv(): AsyncGenerator<string> {
        let chunk = csvLine(input.columns);
        const reads: Array<Promise<string>> = [];
        let next = 0;
        const fill = () => {
          while (reads.length < CSV_READ_AHEAD && next < keys.length) {
            const read = readText(store, keys[next++]!);
            read.catch(() => undefined); // awaited in order below
            reads.push(read);
          }
        };
        fill();
        while (reads.length > 0) {
          const text = await reads.shift()!;
          fill();
          for (const line of text.split('\n')) {
            if (line === '') continue;
            const values = alignRow(input.keys, JSON.parse(line) as Record<string, string>);
            chunk += csvLine(padding.length ? [...values, ...padding] : values);
            rows++;
            if (chunk.length >= CHUNK_CHARS) {
              bytes += Buffer.byteLength(chunk);
              yield chunk;
              chunk = '';
            }
          }
          done++;
        }
        bytes += Buffer.byteLength(chunk);
        yield chunk;
      }

      try {
        const key = csvKey(input.runKey, input.table);
        await writeStream(store, key, readableOf(csv()));
        const uri = store.urlOf(key);
        return { uri, grant: deps.confinement.grant(uri), rows, bytes, pages: keys.length };
      } finally {
        clearInterval(timer);
      }
    });
}
