/**
 * Where extraction stages its pages and CSVs: a narrow interface (`put`, `putStream`, `list`, `get`, `delete`) with
 * two adapters, chosen by the worker's `SAPI_STAGING_URL`:
 * - `s3://bucket/prefix`: S3 or MinIO with the worker's own keys (`deps.userS3()`); the bucket is created when
 *   missing. Durable and shared: any worker can take over an extraction.
 * - a local folder: every write is atomic (temporary file + rename). Only the host that has the folder can resume,
 *   build the CSVs and upload them (route the activities to that host's task queue when several hosts run workers).
 *
 * Layout under the staging root (keys sort in extraction order):
 * `<runKey>/r<jobRun>/p<firstPage>-<lastPage>/<table>.jsonl` (numbers zero-padded to 10 digits; one JSON object per
 * row, keyed by flattened key; one object per table for a run of consecutive pages, see `PageGroupWriter`) and
 * `<runKey>/csv/<table>.csv` (the CSV built for loading).
 */
import { closeSync, createReadStream, createWriteStream, openSync, writeSync } from 'node:fs';
import { mkdir, readdir, rename, rm, rmdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  CreateBucketCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { SapiErrorCode, SapiInvalidInputError, SapiTransferError } from '../errors';
import { s3ErrorInfo } from './s3-client';

/** The staging store: keys are `/`-separated relative paths. */
export interface StageStore {
  /** The staging root as configured (`s3://bucket/prefix` or an absolute folder). */
  readonly root: string;
  /** Writes (or replaces) a small object at once. */
  put(key: string, body: string | Buffer): Promise<void>;
  /** Streams a large object (multipart on S3); replaces it when it exists. */
  putStream(key: string, body: Readable): Promise<void>;
  /** Keys that start with `prefix`, sorted. */
  list(prefix: string): Promise<string[]>;
  get(key: string): Promise<Readable>;
  /** Deletes the keys (missing ones are ignored). */
  delete(keys: readonly string[]): Promise<void>;
  /** What other components read the object by: `s3://bucket/key` or an absolute path. */
  uriOf(key: string): string;
  /**
   * Opens a new append-only log (replacing any object of that key): one write per `append`, read back with `get`.
   * Local folders only; absent on S3, which cannot append.
   */
  openLog?(key: string): Promise<StageLog>;
}

/** An append-only staged object (see {@link StageStore.openLog}). */
export interface StageLog {
  /** Writes `text` at the end of the log, whole, before it resolves. */
  append(text: string): Promise<void>;
  close(): Promise<void>;
}

/** Part size of streamed S3 writes (the built CSVs): 8 MiB, 2 in flight. */
export const STAGE_PART_SIZE_BYTES = 8 * 1024 * 1024;

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
export function createStageStore(stagingUrl: string, s3: () => S3Client): StageStore {
  if (/^s3:\/\//i.test(stagingUrl)) return s3StageStore(stagingUrl, s3());
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(stagingUrl)) {
    throw new SapiInvalidInputError(`SAPI_STAGING_URL must be s3://bucket/prefix or a local folder, got ${JSON.stringify(stagingUrl)}`);
  }
  return localStageStore(stagingUrl);
}

/** What {@link stageStoreOf} needs from the worker's dependencies (the activity deps satisfy it). */
export interface StageStoreDeps {
  settings: { stagingUrl: string };
  /** The worker's own S3 client (only called for an `s3://` staging URL). */
  userS3(): S3Client;
}

const stores = new WeakMap<StageStoreDeps, StageStore>();

/** The worker's staging store (one per dependency set). */
export function stageStoreOf(deps: StageStoreDeps): StageStore {
  let store = stores.get(deps);
  if (!store) {
    store = createStageStore(deps.settings.stagingUrl, () => deps.userS3());
    stores.set(deps, store);
  }
  return store;
}

function checkKey(key: string): void {
  if (key === '' || key.startsWith('/') || key.split('/').some((part) => part === '..' || part === '.')) {
    throw new SapiInvalidInputError(`invalid staging key ${JSON.stringify(key)}`);
  }
}

/** A local folder. Writes go to a temporary file in the same folder, then `rename` (atomic on POSIX). */
export function localStageStore(folder: string): StageStore {
  const root = resolve(folder);
  const pathOf = (key: string) => {
    checkKey(key);
    return join(root, ...key.split('/'));
  };
  const tmpOf = (path: string) => `${path}.${process.pid}.${Math.random().toString(36).slice(2, 10)}.tmp`;
  // the folder's creation in flight, shared by the writes that start together: a page-checkpoint group writes its
  // table(s) and its marker into a new folder at once, and each recursive mkdir is a trip through libuv's thread pool
  // (on a busy 2-core machine the biggest cost of staging a page). Only while in flight, so the map stays small and a
  // folder deleted since is made again.
  const making = new Map<string, Promise<unknown>>();
  const ensureFolder = (folder: string): Promise<unknown> => {
    let made = making.get(folder);
    if (!made) {
      made = mkdir(folder, { recursive: true }).finally(() => making.delete(folder));
      making.set(folder, made);
    }
    return made;
  };
  return {
    root,
    async put(key, body) {
      const path = pathOf(key);
      const tmp = tmpOf(path);
      try {
        await ensureFolder(dirname(path));
        await writeFile(tmp, body);
        await rename(tmp, path);
      } catch (err) {
        await rm(tmp, { force: true }).catch(() => undefined); // (none where the folder could not be made)
        throw stageError('write', key, err);
      }
    },
    async putStream(key, body) {
      const path = pathOf(key);
      const tmp = tmpOf(path);
      try {
        await ensureFolder(dirname(path));
        await pipeline(body, createWriteStream(tmp));
        await rename(tmp, path);
      } catch (err) {
        await rm(tmp, { force: true }).catch(() => undefined); // (none where the folder could not be made)
        throw stageError('write', key, err);
      }
    },
    async list(prefix) {
      // walk from the deepest folder the prefix names fully
      const slash = prefix.lastIndexOf('/');
      const base = slash === -1 ? '' : prefix.slice(0, slash);
      const keys: string[] = [];
      const walk = async (dirKey: string): Promise<void> => {
        let entries;
        try {
          entries = await readdir(dirKey === '' ? root : pathOf(dirKey), { withFileTypes: true });
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
          throw stageError('list', prefix, err);
        }
        for (const entry of entries) {
          const key = dirKey === '' ? entry.name : `${dirKey}/${entry.name}`;
          if (entry.isDirectory()) {
            if (key.startsWith(prefix) || prefix.startsWith(`${key}/`)) await walk(key);
          } else if (key.startsWith(prefix) && !entry.name.endsWith('.tmp')) {
            keys.push(key);
          }
        }
      };
      await walk(base);
      return keys.sort();
    },
    async get(key) {
      const stream = createReadStream(pathOf(key));
      await new Promise<void>((ok, fail) => {
        stream.once('open', () => ok());
        stream.once('error', (err) => fail(stageError('read', key, err)));
      });
      return stream;
    },
    async delete(keys) {
      const folders = new Set<string>();
      for (const key of keys) {
        await rm(pathOf(key), { force: true });
        for (let folder = dirname(pathOf(key)); folder.startsWith(root + sep); folder = dirname(folder)) folders.add(folder);
      }
      // the folders the keys leave empty go too (deepest first), as on S3 where a prefix exists only through its keys
      for (const folder of [...folders].sort((a, b) => b.length - a.length)) await rmdir(folder).catch(() => undefined);
    },
    uriOf(key) {
      const path = pathOf(key);
      if (!path.startsWith(root + sep)) throw new SapiInvalidInputError(`invalid staging key ${JSON.stringify(key)}`);
      return path;
    },
    async openLog(key) {
      const path = pathOf(key);
      let fd: number;
      try {
        await ensureFolder(dirname(path));
        fd = openSync(path, 'w');
      } catch (err) {
        throw stageError('write', key, err);
      }
      let closed = false;
      return {
        // a synchronous write: ~15 µs for a page's rows where an awaited one took ~80 µs, and no other write of this
        // log can interleave with it
        async append(text) {
          try {
            const bytes = Buffer.from(text);
            for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at);
          } catch (err) {
            throw stageError('write', key, err);
          }
        },
        async close() {
          if (closed) return;
          closed = true;
          closeSync(fd);
        },
      };
    },
  };
}

/** An `s3://bucket/prefix` root, with the worker's S3 client. */
export function s3StageStore(stagingUrl: string, s3: S3Client): StageStore {
  const m = /^s3:\/\/([^/]+)\/?(.*)$/i.exec(stagingUrl);
  if (!m) throw new SapiInvalidInputError(`SAPI_STAGING_URL must look like s3://bucket/prefix, got ${JSON.stringify(stagingUrl)}`);
  const bucket = m[1]!;
  const prefix = m[2]!.replace(/\/+$/, '');
  const keyOf = (key: string) => {
    checkKey(key);
    return prefix === '' ? key : `${prefix}/${key}`;
  };
  let ready: Promise<void> | undefined;
  const ensureBucket = () => {
    ready ??= (async () => {
      try {
        await s3.send(new HeadBucketCommand({ Bucket: bucket }));
        return;
      } catch (err) {
        const { name, status } = s3ErrorInfo(err);
        if (status !== 404 && name !== 'NotFound' && name !== 'NoSuchBucket') throw stageError('open', `s3://${bucket}`, err);
      }
      try {
        await s3.send(new CreateBucketCommand({ Bucket: bucket }));
      } catch (err) {
        const { name } = s3ErrorInfo(err);
        if (name !== 'BucketAlreadyOwnedByYou' && name !== 'BucketAlreadyExists') throw stageError('create bucket', `s3://${bucket}`, err);
      }
    })().catch((err: unknown) => {
      ready = undefined; // try again on the next call
      throw err;
    });
    return ready;
  };
  return {
    root: `s3://${bucket}${prefix ? `/${prefix}` : ''}`,
    async put(key, body) {
      await ensureBucket();
      try {
        await s3.send(new PutObjectCommand({ Bucket: bucket, Key: keyOf(key), Body: body, ContentType: 'application/x-ndjson' }));
      } catch (err) {
        throw stageError('write', `s3://${bucket}/${keyOf(key)}`, err);
      }
    },
    async putStream(key, body) {
      await ensureBucket();
      try {
        const upload = new Upload({
          client: s3,
          params: { Bucket: bucket, Key: keyOf(key), Body: body, ContentType: 'text/csv' },
          partSize: STAGE_PART_SIZE_BYTES,
          queueSize: 2,
          leavePartsOnError: false,
        });
        await upload.done();
      } catch (err) {
        body.destroy();
        throw stageError('write', `s3://${bucket}/${keyOf(key)}`, err);
      }
    },
    async list(listPrefix) {
      await ensureBucket();
      const full = prefix === '' ? listPrefix : `${prefix}/${listPrefix}`;
      const strip = prefix === '' ? 0 : prefix.length + 1;
      const keys: string[] = [];
      let token: string | undefined;
      try {
        do {
          const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: full, ContinuationToken: token }));
          for (const o of page.Contents ?? []) if (o.Key) keys.push(o.Key.slice(strip));
          token = page.IsTruncated ? page.NextContinuationToken : undefined;
        } while (token);
      } catch (err) {
        throw stageError('list', `s3://${bucket}/${full}`, err);
      }
      return keys.sort();
    },
    async get(key) {
      try {
        const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: keyOf(key) }));
        return out.Body as Readable;
      } catch (err) {
        throw stageError('read', `s3://${bucket}/${keyOf(key)}`, err);
      }
    },
    async delete(keys) {
      if (keys.length === 0) return;
      await ensureBucket();
      for (let i = 0; i < keys.length; i += 1000) {
        const objects = keys.slice(i, i + 1000).map((k) => ({ Key: keyOf(k) }));
        try {
          await s3.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: objects, Quiet: true } }));
        } catch (err) {
          throw stageError('delete', `s3://${bucket}/${objects[0]!.Key}…`, err);
        }
      }
    },
    uriOf(key) {
      return `s3://${bucket}/${keyOf(key)}`;
    },
  };
}

/** Reads a whole (small) staged object. */
export async function readText(store: StageStore, key: string): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of await store.get(key)) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/** Wraps a staging failure in the registry (retryable unless the store refused with a 4xx). */
function stageError(op: string, where: string, err: unknown): SapiTransferError {
  const { name, status } = s3ErrorInfo(err);
  const code = op === 'read' || op === 'list' ? SapiErrorCode.DOWNLOAD_FAILED : SapiErrorCode.UPLOAD_FAILED;
  const fsCode = (err as NodeJS.ErrnoException | undefined)?.code;
  const refused = (status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429) || fsCode === 'EACCES' || fsCode === 'ENOENT';
  return new SapiTransferError({
    code,
    message: `staging ${op} failed${name && name !== 'Error' ? ` (${name}${status ? ` ${status}` : ''})` : ''}`,
    context: { staging: where },
    retryable: !refused,
    serviceCode: name,
    status,
    cause: err,
  });
}

/** A readable of strings (CSV chunks) from an async generator, for `putStream`. */
export function readableOf(chunks: AsyncIterable<string>): Readable {
  return Readable.from(chunks, { objectMode: false });
}
