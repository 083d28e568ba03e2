/**
 * Download of a stored file (typically a table export) to a local path or an `s3://` destination, over any
 * {@link ObjectStore} (the file detail's `s3Path`, `absPath` or `gcsPath` with its read credentials: see
 * `stores.ts`), or over the presigned `url` alone.
 *
 * - Unsliced: one object.
 * - Sliced to a local path, nothing to decompress: the manifest (`<prefix>manifest`, or `url`), then every slice downloaded **in parallel** (bounded by `concurrency`,
 *   requested in manifest order) and written **at its offset** in `<dest>.partial` (from the answers' sizes), renamed
 *   into place at the end: no second pass (`download-in-place.ts`). The transfer runs in a
 *   worker thread as plain GETs of presigned URLs, and the hash in another (`in-place-thread.ts`; a file of at most
 *   8 MiB by its `sizeBytes`, in the calling thread: starting the threads would cost more). Resumable: a
 *   retry keeps the slices the heartbeated state lists as finished.
 * - Sliced otherwise (`.gz` slices decompressed, or an `s3://` destination): every slice downloaded in parallel into
 *   `<dest>.parts/<index>`, then concatenated **in manifest order** into the destination. Resumable: a slice file is
 *   complete once renamed from `<index>.partial` to `<index>`; a retry keeps complete slices whose size matches the
 *   store and continues partial ones with a Range request.
 * - Headerless sliced CSV exports get a header line built from `headerColumns`.
 * - Memory is bounded: everything streams (a few stream buffers per slice in flight).
 */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, realpath, rm, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, resolve } from 'node:path';
import { PassThrough, Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { gzipSync } from 'node:zlib';
import { type S3Client } from '@aws-sdk/client-s3';
import { type Dispatcher } from 'undici';
import { SapiError, SapiErrorCode, SapiInvalidInputError, SapiTransferError } from '../errors';
import { defaultHttpPools, redactUrl } from '../http';
import { forEachBounded } from './concurrency';
import { downloadInPlace } from './download-in-place';
import { type DownloadFileResult, type DownloadState } from './download-state';
import { headerLine, readManifest } from './manifest';
import { uploadMultipart } from './multipart-upload';
import { type ObjectReader, type ObjectStore } from './object-store';
import { createS3Client, DEFAULT_CREDENTIALS_MARGIN_MS, parseS3Uri, throwIfAborted } from './s3-client';
import { s3Store } from './s3-store';
import { type ByteSource } from './sources';
import { storeOfFile, type StoredFileLocation } from './stores';
import { type Deadline } from '../http/deadline';
import { urlReader } from './url-reader';
import { concatSlices, fetchToFile, hashFile, isGzipError, prepareWorkDir, WRITE_HIGH_WATER_MARK } from './work-folder';
import { createFileExclusive, moveChecked, openFolder, realPathOrParent, renameChecked, type OpenedFolder } from '../security/local-files';

export { keptSlices } from './download-in-place';
export { type DownloadFileResult, type DownloadState } from './download-state';
export { headerLine, readManifest } from './manifest';

/** Slices downloaded in parallel by default: 4. */
export const DEFAULT_DOWNLOAD_CONCURRENCY = 4;

/** The fields of a file detail (`GET files/{id}?federationToken=1`) a download needs. */
export interface DownloadableFile extends StoredFileLocation {
  id?: number;
  name?: string;
  isSliced: boolean;
  /** Presigned URL of the file, or of the manifest when sliced (expires in about 1 h). */
  url?: string;
  sizeBytes?: number | null;
}

export interface DownloadFileOptions {
  file: DownloadableFile;
  /** A local path (folders are created) or `s3://bucket/key` (uploaded with the default AWS credentials chain). */
  destination: string;
  /**
   * `destination` is a real path already checked (against the worker's roots: the plugin's activity): its folder must
   * be that very folder when it is opened, or the download is refused (`SAPI_INPUT_FORBIDDEN`: a folder was swapped
   * for a link since the check). Default false: the path is resolved here first.
   */
  destinationChecked?: boolean;
  /** Client for reading the file; default: made from `file.credentials`, `file.region` and `endpoint`. */
  s3?: S3Client;
  /** Default `AWS_ENDPOINT_URL_S3`. */
  endpoint?: string;
  /** GCS JSON API root (an emulator's); default `https://storage.googleapis.com`. */
  gcsEndpoint?: string;
  /** The end of the time each store call has, the SDK's retries included (the activity attempt's); default: none. */
  deadline?: Deadline;
  /** Client for an `s3://` destination; default: the default credentials chain and `AWS_ENDPOINT_URL_S3`. */
  destinationS3?: S3Client;
  /** Slices in flight. Default {@link DEFAULT_DOWNLOAD_CONCURRENCY}. */
  concurrency?: number;
  /** Written as the first line (`"a","b"`): for headerless sliced CSV exports. */
  headerColumns?: readonly string[];
  /**
   * Decompress gzip data. Default: `.gz` slices of a sliced file are decompressed, an unsliced file is kept as
   * stored. `true` decompresses everything, `false` nothing (a header is then added as its own gzip member).
   */
  gunzip?: boolean;
  /** State of a previous attempt. Slices on disk are verified against the store whatever it says. */
  resume?: DownloadState;
  onProgress?: (state: DownloadState) => void;
  /** Folder for slice files. Default `<destination>.parts`, or a folder in the OS temp dir for `s3://`. */
  workDir?: string;
  /** Keep the slice files after success. Default false. */
  keepWorkDir?: boolean;
  /** undici dispatcher for presigned URLs; default: `defaultHttpPools().transfers` (the plugin passes its own). The slice GETs of the in-place path run in a worker thread on connections of their own. */
  dispatcher?: Dispatcher;
  credentialsMarginMs?: number;
  signal?: AbortSignal;
}

/** Downloads a file. See the module doc. */
export async function downloadFile(options: DownloadFileOptions): Promise<DownloadFileResult> {
  const { file, destination } = options;
  const concurrency = options.concurrency ?? DEFAULT_DOWNLOAD_CONCURRENCY;
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new SapiInvalidInputError(`concurrency must be a positive integer (got ${concurrency})`);
  if (!destination) throw new SapiInvalidInputError('downloadFile needs a destination (a local path or s3://bucket/key)');
  const located =
    options.s3 && file.s3Path
      ? { store: s3Store({ s3: options.s3, bucket: file.s3Path.bucket, credentials: file.credentials }), key: file.s3Path.key }
      : storeOfFile(file, { s3Endpoint: options.endpoint, gcsEndpoint: options.gcsEndpoint, dispatcher: options.dispatcher, deadline: options.deadline });
  if (!located && !file.url) {
    throw new SapiInvalidInputError(
      `file ${file.id ?? ''} has neither s3Path+credentials, absPath+absCredentials, gcsPath+gcsCredentials nor url: request its detail with federationToken=1`,
    );
  }
  if (!located && file.isSliced) {
    throw new SapiInvalidInputError(`file ${file.id ?? ''} is sliced but has no credentials: request its detail with federationToken=1`);
  }
  try {
    return await downloadFrom(options, concurrency, located?.store, located?.key);
  } finally {
    located?.store.close();
  }
}

/**
 * {@link downloadFile} through a given store: the file's objects under `key` (its key, or its prefix when sliced).
 * `options.file` says whether it is sliced, and identifies it (work folder, resume).
 */
export function downloadFromStore(store: ObjectStore, key: string, options: DownloadFileOptions): Promise<DownloadFileResult> {
  const concurrency = options.concurrency ?? DEFAULT_DOWNLOAD_CONCURRENCY;
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new SapiInvalidInputError(`concurrency must be a positive integer (got ${concurrency})`);
  return downloadFrom(options, concurrency, store, key);
}

/** The download itself: the file's objects read through `store` (under `key`), or its presigned URL without one. */
async function downloadFrom(
  options: DownloadFileOptions,
  concurrency: number,
  store: ObjectStore | undefined,
  key: string | undefined,
): Promise<DownloadFileResult> {
  const toS3 = /^s3:\/\//i.test(options.destination);
  // a local destination: its folder is opened once and checked (created a folder at a time, never through a link),
  // and every file of the download is written in it through the opened folder (see security/local-files)
  const destination = toS3 || options.destinationChecked ? options.destination : await realPathOrParent(resolve(options.destination));
  const folder = toS3 ? undefined : await openFolder(dirname(destination), 'destination');
  // the work folder: `<destination>.parts` next to it, a folder of the OS temp dir for s3://, or the one asked for
  const workPath = options.workDir && resolve(options.workDir);
  const workParent = workPath ? await openWorkParent(dirname(workPath)) : toS3 ? await openWorkParent(tmpdir()) : folder!;
  const workName = workPath
    ? basename(workPath)
    : toS3
      ? `sapi-temporal-download-${createHash('sha1')
          .update(`${destination}|${options.file.id ?? options.file.url ?? ''}`)
          .digest('hex')
          .slice(0, 16)}`
      : `${basename(destination)}.parts`;
  try {
    return await downloadInto({ ...options, destination }, concurrency, store, key, folder, workParent, workName);
  } finally {
    if (workParent !== folder) await workParent.close();
    await folder?.close();
  }
}

/** The folder a work folder is made in (the worker's own: created when missing). */
async function openWorkParent(path: string): Promise<OpenedFolder> {
  await mkdir(path, { recursive: true });
  return openFolder(await realpath(path), 'workDir');
}

async function downloadInto(
  options: DownloadFileOptions,
  concurrency: number,
  store: ObjectStore | undefined,
  key: string | undefined,
  folder: OpenedFolder | undefined,
  workParent: OpenedFolder,
  workName: string,
): Promise<DownloadFileResult> {
  const { file, destination, signal } = options;
  const where = `download [file=${file.id ?? file.name ?? '?'}]`;
  store?.assertFresh(where, options.credentialsMarginMs ?? DEFAULT_CREDENTIALS_MARGIN_MS);
  const dispatcher = options.dispatcher ?? defaultHttpPools().transfers;
  const toS3 = folder === undefined;
  const name = basename(destination);

  // 1. What to fetch: the file's objects, read through its store (or its presigned URL alone).
  let objects: ObjectReader[];
  if (file.isSliced) {
    const manifestReader = store ? store.reader(`${key}manifest`) : urlReader(dispatcher, file.url as string);
    objects = (await readManifest(manifestReader, signal)).map((url) => (store as ObjectStore).reader((store as ObjectStore).keyOf(url)));
  } else {
    objects = [store ? store.reader(key as string) : urlReader(dispatcher, file.url as string)];
  }
  const decompress = objects.map((o) => options.gunzip ?? (file.isSliced && o.gz));
  const header = options.headerColumns?.length ? headerLine(options.headerColumns) : undefined;
  const gzipHeader = header !== undefined && options.gunzip === false && (objects.some((o) => o.gz) || /\.gz$/i.test(file.name ?? ''));

  // 2. Uncompressed slices to a local path: each written at its offset in the destination, in parallel, no work folder.
  const headerBytes = header === undefined ? undefined : gzipHeader ? gzipSync(header) : Buffer.from(header);
  if (file.isSliced && !toS3 && !decompress.some(Boolean)) {
    const expiration = store?.expiration;
    return downloadInPlace({
      objects,
      destination,
      folder: folder!,
      name,
      headerBytes,
      concurrency,
      workDir: workParent.path(workName),
      resume: options.resume,
      source: identityOf(file),
      sizeBytes: file.sizeBytes ?? undefined,
      expiration,
      where,
      onProgress: options.onProgress,
      signal,
    });
  }

  // 3. The work folder belongs to one stored file: leftovers of another file are discarded, never resumed.
  const workDir = await prepareWorkDir(workParent, workName, identityOf(file));
  let result: DownloadFileResult;
  try {
    result = await downloadSlices(options, concurrency, store, folder, workDir, objects, decompress, header, headerBytes, where);
  } finally {
    await workDir.close();
  }
  // kept after a failure: a retry continues from its slices
  if (!options.keepWorkDir) await rm(workParent.path(workName), { recursive: true, force: true });
  return result;
}

/** Steps 4 to 6 of {@link downloadInto}: the slices through the work folder. */
async function downloadSlices(
  options: DownloadFileOptions,
  concurrency: number,
  store: ObjectStore | undefined,
  folder: OpenedFolder | undefined,
  workDir: OpenedFolder,
  objects: ObjectReader[],
  decompress: boolean[],
  header: string | undefined,
  headerBytes: Buffer | undefined,
  where: string,
): Promise<DownloadFileResult> {
  const { file, destination, signal } = options;
  const name = basename(destination);
  // 4. Fast path: one object, no transformation, local destination → download, then move into place.
  if (!file.isSliced && !decompress[0] && header === undefined && folder) {
    const downloaded = await fetchToFile(objects[0] as ObjectReader, workDir, '0', signal);
    options.onProgress?.({ slices: 1, finishedSlices: [0], bytesDownloaded: downloaded.bytes });
    const { bytes, sha256 } = await hashFile(workDir, '0');
    await moveChecked(undefined, workDir, '0', folder, name, 'destination');
    return { path: destination, bytes, sha256, slices: 1, sliced: false, slicesDownloaded: downloaded.fetched ? 1 : 0 };
  }

  // 5. Slices into the work folder, in parallel.
  const sizes = new Map<number, number>();
  let slicesDownloaded = 0;
  const report = (): void =>
    options.onProgress?.({
      slices: objects.length,
      finishedSlices: [...sizes.keys()].sort((a, b) => a - b),
      bytesDownloaded: [...sizes.values()].reduce((n, s) => n + s, 0),
    });
  await forEachBounded(objects, concurrency, async (obj, index) => {
    throwIfAborted(signal);
    store?.assertFresh(`${where.slice(0, -1)}, slice=${index}]`, 0);
    const r = await fetchToFile(obj, workDir, String(index), signal);
    sizes.set(index, r.bytes);
    if (r.fetched) slicesDownloaded++;
    report();
  });

  // 6. Concatenate in manifest order.
  const hash = createHash('sha256');
  let bytes = 0;
  const tap = new Transform({
    transform(chunk: Buffer, _enc, cb: TransformCallback) {
      hash.update(chunk);
      bytes += chunk.length;
      cb(null, chunk);
    },
  });
  const concatenated = (): Readable => Readable.from(concatSlices(workDir, objects.length, decompress, headerBytes));
  if (!folder) {
    const { bucket, key } = parseS3Uri(destination);
    const source: ByteSource = {
      description: `${objects.length} slice(s) of file ${file.id ?? ''}`,
      async open(start) {
        if (start !== 0) throw new SapiInvalidInputError('a concatenated download cannot be reopened mid-stream');
        const pass = new PassThrough({ highWaterMark: WRITE_HIGH_WATER_MARK });
        void pipeline(concatenated(), tap, pass).catch((err: unknown) => pass.destroy(err as Error));
        return pass;
      },
    };
    const destS3 = options.destinationS3 ?? createS3Client();
    try {
      await uploadMultipart({ s3: destS3, bucket, key, source, signal, sha256: false });
    } finally {
      if (!options.destinationS3) destS3.destroy();
    }
  } else {
    // `<name>.partial` created exclusively (whatever had its name, a planted link included, is removed first)
    const partialName = `${name}.partial`;
    const partial = await createFileExclusive(folder, partialName);
    try {
      try {
        await pipeline(
          concatenated(),
          tap,
          createWriteStream(folder.path(partialName), { fd: partial.fd, autoClose: false, highWaterMark: WRITE_HIGH_WATER_MARK }),
          { signal },
        );
      } catch (err) {
        await unlink(folder.path(partialName)).catch(() => undefined);
        if (signal?.aborted) throw signal.reason ?? err;
        if (err instanceof SapiError) throw err;
        throw new SapiTransferError({
          code: SapiErrorCode.DOWNLOAD_FAILED,
          message: 'concatenating slices failed',
          context: { destination, workDir: workDir.real },
          cause: err,
          retryable: !isGzipError(err),
        });
      }
      await renameChecked(partial, folder, partialName, folder, name, 'destination');
    } finally {
      await partial.close().catch(() => undefined);
    }
  }
  return { path: destination, bytes, sha256: hash.digest('hex'), slices: objects.length, sliced: file.isSliced, slicesDownloaded };
}

/** What identifies the stored file behind a work folder (stored files are immutable). */
function identityOf(file: DownloadableFile): string {
  const where = file.s3Path
    ? `s3://${file.s3Path.bucket}/${file.s3Path.key}`
    : file.absPath
      ? `azure:${file.absPath.container}/${file.absPath.name}`
      : file.gcsPath
        ? `gs://${file.gcsPath.bucket}/${file.gcsPath.key}`
        : file.url
          ? redactUrl(file.url)
          : '';
  return JSON.stringify({ id: file.id ?? null, where, sliced: file.isSliced });
}
