/**
 * Where extraction stages its pages and CSVs: an {@link ObjectStore} chosen by the worker's `SAPI_STAGING_URL`:
 * - `s3://bucket/prefix`: S3 or MinIO with the worker's own keys (`deps.userS3()`); the bucket is created when
 *   missing. Durable and shared: any worker can take over an extraction.
 * - a local folder (`local-store.ts`): every write is atomic (temporary file + rename). Only the host that has the
 *   folder can resume, build the CSVs and upload them (route the activities to that host's task queue when several
 *   hosts run workers).
 *
 * Layout under the staging root (keys sort in extraction order):
 * `<runKey>/r<jobRun>/p<firstPage>-<lastPage>/<table>.jsonl` (numbers zero-padded to 10 digits; one JSON object per
 * row, keyed by flattened key; one object per table for a run of consecutive pages, see `PageGroupWriter`) and
 * `<runKey>/csv/<table>.csv` (the CSV built for loading).
 */
import { Readable } from 'node:stream';
import { type S3Client } from '@aws-sdk/client-s3';
import { SapiInvalidInputError } from '../errors';
import { localStore } from './local-store';
import { type ObjectStore } from './object-store';
import { s3Store } from './s3-store';
import { type ByteSource } from './sources';

/** The staging store's type as the CLI names it: an {@link ObjectStore}. */
export type StageStore = ObjectStore;

/** Part size of streamed writes (the built CSVs): 8 MiB, 2 in flight. */
const STAGE_PART_SIZE_BYTES = 8 * 1024 * 1024;

const pad = (n: number) => String(n).padStart(10, '0');

/** Prefix of every staged page of a job run. */
export function jobRunPrefix(runKey: string, runNo: number): string {
  return `${runKey}/r${pad(runNo)}/`;
}

/** Key of the rows of one table from pages `firstPage`..`lastPage` of a job run. */
export function pageKey(runKey: string, runNo: number, firstPage: number, lastPage: number, table: string): string {
  return `${jobRunPrefix(runKey, runNo)}p${pad(firstPage)}-${pad(lastPage)}/${table}.jsonl`;
}

/**
 * Key of the checkpoint marker of pages `firstPage`..`lastPage` (page checkpoints, see `PageGroupWriter`): the resume
 * point after the group and the tables it staged. A table is never named with a leading dot, so it is no table's key.
 */
export function groupCheckpointKey(runKey: string, runNo: number, firstPage: number, lastPage: number): string {
  return `${jobRunPrefix(runKey, runNo)}p${pad(firstPage)}-${pad(lastPage)}/.checkpoint.json`;
}

/**
 * Key of the page log of one call of a job run (page checkpoints on a store that can append, see `PageGroupWriter`):
 * named by the call's first page and its attempt, outside any group's folder (no reader of groups sees it).
 */
export function pageLogKey(runKey: string, runNo: number, firstPage: number, attempt: number): string {
  return `${jobRunPrefix(runKey, runNo)}l${pad(firstPage)}-a${attempt}.log`;
}

/** Extraction key and job run of a key made by {@link pageLogKey} (`undefined` for other keys). */
export function parsePageLogKey(key: string): { runKey: string; runNo: number } | undefined {
  const m = /^(.*)\/r(\d{10})\/l\d{10}-a\d+\.log$/.exec(key);
  return m ? { runKey: m[1]!, runNo: Number(m[2]) } : undefined;
}

/** True for a key made by {@link pageLogKey}. */
export function isPageLogKey(key: string): boolean {
  return parsePageLogKey(key) !== undefined;
}

/** Job run and page range of any key under a group (its tables and its checkpoint marker); `undefined` for other keys. */
export function parseGroupKey(key: string): { runNo: number; firstPage: number; lastPage: number } | undefined {
  const m = /\/r(\d{10})\/p(\d{10})-(\d{10})\/[^/]+$/.exec(key);
  return m ? { runNo: Number(m[1]), firstPage: Number(m[2]), lastPage: Number(m[3]) } : undefined;
}

/** Prefix of every staged page of an extraction (CSVs excluded). */
export function pagesPrefix(runKey: string): string {
  return `${runKey}/r`;
}

/** Job run, page range and table of a page key (`undefined` for other keys). */
export function parsePageKey(key: string): { runNo: number; firstPage: number; lastPage: number; table: string } | undefined {
  const m = /\/r(\d{10})\/p(\d{10})-(\d{10})\/([^/]+)\.jsonl$/.exec(key);
  return m ? { runNo: Number(m[1]), firstPage: Number(m[2]), lastPage: Number(m[3]), table: m[4]! } : undefined;
}

/** Child runs per staged chunk of a page's child list (see `ChildrenRef`). */
export const CHILD_CHUNK_SIZE = 1000;

/** Prefix of every staged child list of an extraction. */
export function childrenRootPrefix(runKey: string): string {
  return `${runKey}/children/`;
}

/** Prefix of the staged child list of page `pageNo` of a job run (chunks of {@link CHILD_CHUNK_SIZE} JSON lines). */
export function childrenPrefix(runKey: string, runNo: number, pageNo: number): string {
  return `${childrenRootPrefix(runKey)}r${pad(runNo)}-p${pad(pageNo)}/`;
}

/** Key of chunk `chunk` (0-based) of a staged child list. */
export function childChunkKey(prefix: string, chunk: number): string {
  return `${prefix}c${pad(chunk)}.jsonl`;
}

/** Key of the CSV built for a table. */
export function csvKey(runKey: string, table: string): string {
  return `${runKey}/csv/${table}.csv`;
}

/** Opens the store named by a staging URL. */
export function createStageStore(stagingUrl: string, s3: () => S3Client): ObjectStore {
  if (/^s3:\/\//i.test(stagingUrl)) {
    const m = /^s3:\/\/([^/]+)\/?(.*)$/i.exec(stagingUrl);
    if (!m) throw new SapiInvalidInputError(`SAPI_STAGING_URL must look like s3://bucket/prefix, got ${JSON.stringify(stagingUrl)}`);
    return s3Store({ s3: s3(), bucket: m[1]!, prefix: m[2]!, createBucket: true });
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(stagingUrl)) {
    throw new SapiInvalidInputError(`SAPI_STAGING_URL must be s3://bucket/prefix or a local folder, got ${JSON.stringify(stagingUrl)}`);
  }
  return localStore(stagingUrl);
}

/** What {@link stageStoreOf} needs from the worker's dependencies (the activity deps satisfy it). */
interface StageStoreDeps {
  settings: { stagingUrl: string };
  /** The worker's own S3 client (only called for an `s3://` staging URL). */
  userS3(): S3Client;
}

const stores = new WeakMap<StageStoreDeps, ObjectStore>();

/** The worker's staging store (one per dependency set). */
export function stageStoreOf(deps: StageStoreDeps): ObjectStore {
  let store = stores.get(deps);
  if (!store) {
    store = createStageStore(deps.settings.stagingUrl, () => deps.userS3());
    stores.set(deps, store);
  }
  return store;
}

/** Reads a whole (small) staged object. */
export async function readText(store: ObjectStore, key: string): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of (await store.reader(key).get(0)).body) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Streams a large object (the built CSVs) to `key`, replacing it: one upload in {@link STAGE_PART_SIZE_BYTES} parts,
 * 2 in flight. The stream is read once (such an upload does not resume).
 */
export async function writeStream(store: ObjectStore, key: string, body: Readable, contentType = 'text/csv'): Promise<void> {
  try {
    await store.upload({ key, source: streamSource(body, store.urlOf(key)), partSizeBytes: STAGE_PART_SIZE_BYTES, concurrency: 2, contentType });
  } finally {
    body.destroy();
  }
}

/** A {@link ByteSource} over a stream that can be read once, from its start. */
function streamSource(body: Readable, description: string): ByteSource {
  let opened = false;
  return {
    description,
    open(start) {
      if (opened || start !== 0)
        return Promise.reject(new SapiInvalidInputError(`${description}: a stream is read once, from its start (asked from ${start})`));
      opened = true;
      return Promise.resolve(body);
    },
  };
}

/** A readable of strings (CSV chunks) from an async generator, for {@link writeStream}. */
export function readableOf(chunks: AsyncIterable<string>): Readable {
  return Readable.from(chunks, { objectMode: false });
}
