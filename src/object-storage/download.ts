/**
 * Download of a stored file (typically a table export) to a local path or an `s3://` destination.
 *
 * - Unsliced: one object (from `s3Path` with the read credentials, `absPath` with the Azure SAS, `gcsPath` with the
 *   GCS access token, or the presigned `url`).
 * - Sliced to a local path, nothing to decompress: the manifest (`s3Path.key + "manifest"`, `absPath.name + "manifest"`,
 *   `gcsPath.key + "manifest"`, or `url`), then every slice downloaded **in parallel** (bounded by `concurrency`,
 *   requested in manifest order) and written **at its offset** in `<dest>.partial` (from the answers' sizes), renamed
 *   into place at the end: no second pass (see `downloadInPlace`). The transfer runs in a
 *   worker thread as plain GETs of presigned URLs, and the hash in another (`in-place-thread.ts`). Resumable: a
 *   retry keeps the slices the heartbeated state lists as finished.
 * - Sliced otherwise (`.gz` slices decompressed, or an `s3://` destination): every slice downloaded in parallel into
 *   `<dest>.parts/<index>`, then concatenated **in manifest order** into the destination. Resumable: a slice file is
 *   complete once renamed from `<index>.partial` to `<index>`; a retry keeps complete slices whose size matches the
 *   store and continues partial ones with a Range request.
 * - Headerless sliced CSV exports get a header line built from `headerColumns`.
 * - Memory is bounded: everything streams (a few stream buffers per slice in flight).
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readFile, rename, rm, stat, truncate, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PassThrough, Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, gzipSync } from 'node:zlib';
import { GetObjectCommand, HeadObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { type Dispatcher } from 'undici';
import { SapiCredentialsExpiredError, SapiError, SapiErrorCode, SapiInvalidInputError, SapiTransferError, excerptOf } from '../errors';
import { manifestSchema } from '../storage-api/schemas';
import { forEachBounded } from './concurrency';
import { type InPlaceJob, inPlaceRunner, type InPlaceRunner, SliceFailure } from './in-place-thread';
import { uploadMultipart } from './multipart-upload';
import {
  assertCredentialsFresh,
  createS3Client,
  DEFAULT_CREDENTIALS_MARGIN_MS,
  mapS3Error,
  parseS3Uri,
  presignGetObject,
  s3ErrorCodeOf,
  s3ErrorInfo,
  throwIfAborted,
  type TemporaryCredentials,
} from './s3-client';
import { type ByteSource } from './sources';
import { defaultHttpPools, redactUrl } from '../http';
import { type ContainerClient } from '@azure/storage-blob';
import { absErrorInfo, assertAbsCredentialsFresh, createContainerClient, mapAbsError, parseAbsUrl, type AbsCredentials } from './abs-client';
import { assertGcsCredentialsFresh, GcsClient, gcsCredentialsOf, gcsFailure, parseGsUrl, type GcsCredentials } from './gcs-client';

/** Slices downloaded in parallel by default: 4. */
export const DEFAULT_DOWNLOAD_CONCURRENCY = 4;
/** Write buffer of local files: 1 MiB. */
const WRITE_HIGH_WATER_MARK = 1024 * 1024;

/** The fields of a file detail (`GET files/{id}?federationToken=1`) a download needs. */
export interface DownloadableFile {
  id?: number;
  name?: string;
  isSliced: boolean;
  /** Presigned URL of the file, or of the manifest when sliced (expires in about 1 h). */
  url?: string;
  region?: string;
  sizeBytes?: number | null;
  /** Bucket and key (a prefix when sliced). */
  s3Path?: { bucket: string; key: string };
  /** Read credentials of the file. */
  credentials?: TemporaryCredentials;
  /** Azure: container and blob name (a prefix when sliced). */
  absPath?: { container: string; name: string };
  /** Azure: read SAS of the file. */
  absCredentials?: AbsCredentials;
  /** GCS: bucket and key (a prefix when sliced). */
  gcsPath?: { bucket: string; key: string };
  /** GCS: the read token as the service answers it (`expires_in` seconds, counted from the download's start). */
  gcsCredentials?: { access_token: string; expires_in: number; projectId: string };
}

/** Progress of a download: heartbeat it, pass it back as `resume` (JSON, no secrets). */
export interface DownloadState {
  slices: number;
  /** Indexes (manifest order) of slices fully downloaded (to the work folder, or in place: see `inPlace`). */
  finishedSlices: number[];
  /** Bytes of finished slices as stored (compressed when gzipped). */
  bytesDownloaded: number;
  /**
   * Set when the slices are written at their offsets in `<destination>.partial` (no work folder): the stored file
   * they belong to and the slice sizes learned so far (null: not yet; every finished slice's and its predecessors'
   * are known). A retry keeps the finished slices only for the same file, when `<destination>.partial` still holds
   * them, and checks the sizes against the store's answers.
   */
  inPlace?: { source: string; sizes: Array<number | null> };
}

export interface DownloadFileOptions {
  file: DownloadableFile;
  /** A local path (folders are created) or `s3://bucket/key` (uploaded with the default AWS credentials chain). */
  destination: string;
  /** Client for reading the file; default: made from `file.credentials`, `file.region` and `endpoint`. */
  s3?: S3Client;
  /** Default `AWS_ENDPOINT_URL_S3`. */
  endpoint?: string;
  /** GCS JSON API root (an emulator's); default `https://storage.googleapis.com`. */
  gcsEndpoint?: string;
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

export interface DownloadFileResult {
  /** The local path, or the `s3://` destination. */
  path: string;
  /** Bytes written to the destination. */
  bytes: number;
  /** Hex sha256 of the bytes written. */
  sha256: string;
  /** Slices in the manifest (1 when unsliced). */
  slices: number;
  sliced: boolean;
  /** Slices fetched by this call (the others were complete on disk). */
  slicesDownloaded: number;
}

/** A stored object we can read from an offset and measure. */
interface RemoteObject {
  label: string;
  gz: boolean;
  get(start: number, signal?: AbortSignal): Promise<{ body: Readable; total?: number; fromStart: boolean }>;
  size(signal?: AbortSignal): Promise<number | undefined>;
  /** The whole object as a plain GET (URL and headers, valid for `validSeconds`) for the download thread. */
  plainGet(validSeconds: number): Promise<PlainGet>;
}

interface PlainGet {
  url: string;
  headers: Record<string, string>;
  /** The error of an answer other than 200. */
  failure(status: number, body: string, errorCode?: string): SapiError;
}

/** Downloads a file. See the module doc. */
export async function downloadFile(options: DownloadFileOptions): Promise<DownloadFileResult> {
  const { file, destination } = options;
  const concurrency = options.concurrency ?? DEFAULT_DOWNLOAD_CONCURRENCY;
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new SapiInvalidInputError(`concurrency must be a positive integer (got ${concurrency})`);
  if (!destination) throw new SapiInvalidInputError('downloadFile needs a destination (a local path or s3://bucket/key)');
  if (file.absPath && file.absCredentials) return downloadWith(options, concurrency, { abs: createContainerClient(file.absCredentials, file.absPath.container) });
  if (file.gcsPath && file.gcsCredentials) {
    const credentials = gcsCredentialsOf(file.gcsCredentials);
    const dispatcher = options.dispatcher ?? defaultHttpPools().transfers;
    return downloadWith(options, concurrency, { gcs: new GcsClient({ endpoint: options.gcsEndpoint, credentials, bucket: file.gcsPath.bucket, dispatcher }), gcsCredentials: credentials });
  }
  const useS3 = file.credentials !== undefined && file.s3Path !== undefined;
  if (!useS3 && !file.url) {
    throw new SapiInvalidInputError(`file ${file.id ?? ''} has neither s3Path+credentials, absPath+absCredentials, gcsPath+gcsCredentials nor url: request its detail with federationToken=1`);
  }
  if (file.isSliced && !file.credentials && !options.s3) {
    throw new SapiInvalidInputError(`file ${file.id ?? ''} is sliced but has no credentials: request its detail with federationToken=1`);
  }
  const ownS3 = options.s3 === undefined && file.credentials !== undefined;
  const s3 = options.s3 ?? (file.credentials ? createS3Client({ credentials: file.credentials, region: file.region, endpoint: options.endpoint }) : undefined);
  try {
    return await downloadWith(options, concurrency, { s3 });
  } finally {
    if (ownS3) s3?.destroy();
  }
}

/** The download itself, reading through an S3 client, an Azure container client, a GCS client or the presigned URL. */
async function downloadWith(
  options: DownloadFileOptions,
  concurrency: number,
  stores: { s3?: S3Client; abs?: ContainerClient; gcs?: GcsClient; gcsCredentials?: GcsCredentials },
): Promise<DownloadFileResult> {
  const { file, destination, signal } = options;
  const { s3, abs, gcs } = stores;
  const useS3 = file.credentials !== undefined && file.s3Path !== undefined;
  const where = `download [file=${file.id ?? file.name ?? '?'}]`;
  const assertFresh = (at: string, marginMs: number): void =>
    abs
      ? assertAbsCredentialsFresh(file.absCredentials, at, marginMs)
      : gcs
        ? assertGcsCredentialsFresh(stores.gcsCredentials, at, marginMs)
        : assertCredentialsFresh(file.credentials, at, marginMs);
  assertFresh(where, options.credentialsMarginMs ?? DEFAULT_CREDENTIALS_MARGIN_MS);
  const dispatcher = options.dispatcher ?? defaultHttpPools().transfers;

  const toS3 = /^s3:\/\//i.test(destination);
  const workDir =
    options.workDir ??
    (toS3 ? join(tmpdir(), `sapi-temporal-download-${createHash('sha1').update(`${destination}|${file.id ?? file.url ?? ''}`).digest('hex').slice(0, 16)}`) : `${destination}.parts`);

  // 1. What to fetch.
  let objects: RemoteObject[];
  if (file.isSliced) {
    const manifest = await readManifest({ file, s3, abs, gcs, dispatcher, signal });
    objects = manifest.map((url) => {
      if (gcs) {
        const { bucket, key } = parseGsUrl(url);
        if (bucket !== gcs.bucket) {
          throw new SapiTransferError({ code: SapiErrorCode.DOWNLOAD_FAILED, message: `manifest entry is outside the file's bucket ${gcs.bucket}`, context: { url }, retryable: false });
        }
        return gcsObject(gcs, key);
      }
      if (abs) {
        const { container, blobName } = parseAbsUrl(url);
        if (container !== abs.containerName) {
          throw new SapiTransferError({ code: SapiErrorCode.DOWNLOAD_FAILED, message: `manifest entry is outside the file's container ${abs.containerName}`, context: { url }, retryable: false });
        }
        return absObject(abs, blobName);
      }
      const { bucket, key } = parseS3Uri(url);
      return s3Object(s3 as S3Client, bucket, key);
    });
  } else if (abs) {
    objects = [absObject(abs, (file.absPath as { name: string }).name)];
  } else if (gcs) {
    objects = [gcsObject(gcs, (file.gcsPath as { key: string }).key)];
  } else {
    objects = [useS3 && s3 ? s3Object(s3, file.s3Path!.bucket, file.s3Path!.key) : urlObject(dispatcher, file.url as string)];
  }
  const decompress = objects.map((o) => options.gunzip ?? (file.isSliced && o.gz));
  const header = options.headerColumns?.length ? headerLine(options.headerColumns) : undefined;
  const gzipHeader = header !== undefined && options.gunzip === false && (objects.some((o) => o.gz) || /\.gz$/i.test(file.name ?? ''));

  // 2. Uncompressed slices to a local path: each written at its offset in the destination, in parallel, no work folder.
  const headerBytes = header === undefined ? undefined : gzipHeader ? gzipSync(header) : Buffer.from(header);
  if (file.isSliced && !toS3 && !decompress.some(Boolean)) {
    const expiration = abs ? file.absCredentials?.expiration : gcs ? stores.gcsCredentials?.expiration : file.credentials?.Expiration;
    return downloadInPlace({ objects, destination, headerBytes, concurrency, workDir, resume: options.resume, source: identityOf(file), expiration, where, onProgress: options.onProgress, signal });
  }

  // 3. The work folder belongs to one stored file: leftovers of another file are discarded, never resumed.
  await prepareWorkDir(workDir, identityOf(file));

  // 4. Fast path: one object, no transformation, local destination → download, then move into place.
  if (!file.isSliced && !decompress[0] && header === undefined && !toS3) {
    const sliceFile = join(workDir, '0');
    const downloaded = await fetchToFile(objects[0] as RemoteObject, sliceFile, signal);
    options.onProgress?.({ slices: 1, finishedSlices: [0], bytesDownloaded: downloaded.bytes });
    const { bytes, sha256 } = await hashFile(sliceFile);
    await mkdir(dirname(destination), { recursive: true });
    await rename(sliceFile, destination);
    if (!options.keepWorkDir) await rm(workDir, { recursive: true, force: true });
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
    assertFresh(`${where.slice(0, -1)}, slice=${index}]`, 0);
    const r = await fetchToFile(obj, join(workDir, String(index)), signal);
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
  if (toS3) {
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
    await mkdir(dirname(destination), { recursive: true });
    const partial = `${destination}.partial`;
    try {
      await pipeline(concatenated(), tap, createWriteStream(partial, { highWaterMark: WRITE_HIGH_WATER_MARK }), { signal });
    } catch (err) {
      await unlink(partial).catch(() => undefined);
      if (signal?.aborted) throw signal.reason ?? err;
      if (err instanceof SapiError) throw err;
      throw new SapiTransferError({ code: SapiErrorCode.DOWNLOAD_FAILED, message: 'concatenating slices failed', context: { destination, workDir }, cause: err, retryable: !isGzipError(err) });
    }
    await rename(partial, destination);
  }
  if (!options.keepWorkDir) await rm(workDir, { recursive: true, force: true });
  return { path: destination, bytes, sha256: hash.digest('hex'), slices: objects.length, sliced: file.isSliced, slicesDownloaded };
}

/** What {@link downloadInPlace} needs. */
interface InPlaceDownload {
  objects: readonly RemoteObject[];
  destination: string;
  headerBytes: Buffer | undefined;
  concurrency: number;
  /** The work folder of the other paths: removed when left over. */
  workDir: string;
  resume: DownloadState | undefined;
  /** Identity of the stored file (see `identityOf`). */
  source: string;
  /** When the read credentials expire (ISO 8601), if known: no slice starts after it. */
  expiration: string | undefined;
  /** `download [file=…]`, for errors. */
  where: string;
  onProgress?: (state: DownloadState) => void;
  signal?: AbortSignal;
}

/**
 * Sliced download without a second pass: the slices are requested in manifest order (bounded), each answer's
 * `Content-Length` is its slice's size, and each slice is written at its offset in `<destination>.partial` (after
 * the header: the sizes of the slices before it) as it streams; then the file is renamed into place. No size
 * requests come first. The sha256 follows in manifest order: each slice is read back (from the page cache) and
 * hashed as soon as it and every slice before it are written, while later slices are still downloading. The
 * fetching and hashing run in worker threads of their own (`in-place-thread.ts`: plain GETs of presigned/SAS/token
 * URLs), away from the Temporal worker's main thread. A retry keeps the finished slices of `resume` (see
 * {@link keptSlices}); an unfinished slice is fetched again whole.
 */
async function downloadInPlace(d: InPlaceDownload): Promise<DownloadFileResult> {
  const runner = inPlaceRunner(); // its threads load meanwhile
  try {
    return await downloadInPlaceWith(runner, d);
  } finally {
    await runner.close();
  }
}

async function downloadInPlaceWith(runner: InPlaceRunner, d: InPlaceDownload): Promise<DownloadFileResult> {
  const { objects, destination, headerBytes, signal } = d;
  const partial = `${destination}.partial`;
  const start = headerBytes?.length ?? 0;
  const kept = keptSlices(d.resume, d.source, objects.length, start, await fileSize(partial));
  const sizes = kept.sizes;
  const finished = new Set(kept.finished);
  await rm(d.workDir, { recursive: true, force: true });
  await mkdir(dirname(destination), { recursive: true });
  if (finished.size === 0) await writeFile(partial, headerBytes ?? Buffer.alloc(0));
  const notAfterMs = d.expiration === undefined || Number.isNaN(Date.parse(d.expiration)) ? undefined : Date.parse(d.expiration);
  const validSeconds = notAfterMs === undefined ? DEFAULT_PRESIGN_SECONDS : (notAfterMs - Date.now()) / 1000;
  const gets = await Promise.all(objects.map((obj, index) => (finished.has(index) ? undefined : obj.plainGet(validSeconds))));

  let slicesDownloaded = 0;
  let bytesDownloaded = kept.finished.reduce((n, i) => n + sizes[i]!, 0);
  const job: InPlaceJob = {
    partial,
    start,
    slices: gets.map((get) => ({ url: get?.url ?? '', headers: get?.headers ?? {} })),
    sizes,
    finished: [...finished],
    concurrency: d.concurrency,
    notAfterMs,
  };
  let sha256: string;
  try {
    sha256 = await runner.run(job, headerBytes, {
      size: (index, size) => {
        sizes[index] = size;
      },
      slice: (index, place) => {
        finished.add(index);
        slicesDownloaded++;
        bytesDownloaded += place.size;
        d.onProgress?.({ slices: objects.length, finishedSlices: [...finished].sort((a, b) => a - b), bytesDownloaded, inPlace: { source: d.source, sizes: [...sizes] } });
      },
    }, signal);
  } catch (err) {
    throw inPlaceError(err, d, gets, signal);
  }
  const total = start + sizes.reduce<number>((n, size) => n + (size ?? 0), 0);
  if ((await fileSize(partial)) !== total) await truncate(partial, total); // an earlier attempt's file may be longer
  await rename(partial, destination);
  return { path: destination, bytes: total, sha256, slices: objects.length, sliced: true, slicesDownloaded };
}

/**
 * What a retry keeps of an earlier attempt's in-place download (`resume`): its finished slices and the sizes it
 * learned, when it downloaded the same stored file (`source`) and `<destination>.partial` (`partialSize` bytes,
 * undefined: missing) still reaches the end of every finished slice; otherwise nothing (start over).
 */
export function keptSlices(
  resume: DownloadState | undefined,
  source: string,
  count: number,
  start: number,
  partialSize: number | undefined,
): { finished: number[]; sizes: Array<number | null> } {
  const nothing = { finished: [], sizes: Array<number | null>(count).fill(null) };
  const previous = resume?.inPlace;
  if (previous?.source !== source || !Array.isArray(previous.sizes) || previous.sizes.length !== count || partialSize === undefined) return nothing;
  const sizes = previous.sizes.map((size) => (Number.isSafeInteger(size) && (size as number) >= 0 ? (size as number) : null));
  const finished = [...new Set(resume?.finishedSlices ?? [])].filter((i) => Number.isInteger(i) && i >= 0 && i < count).sort((a, b) => a - b);
  if (finished.length === 0) return nothing;
  let end = start;
  let known = 0; // sizes[0..known) are all known
  for (const index of finished) {
    for (; known <= index; known++) {
      if (sizes[known] === null) return nothing;
      end += sizes[known]!;
    }
  }
  return partialSize >= end ? { finished, sizes } : nothing;
}

/** Validity of a presigned slice URL when the credentials do not say when they expire: 1 h. */
const DEFAULT_PRESIGN_SECONDS = 3600;

/** The `SapiError` of a failure of the download thread. */
function inPlaceError(err: unknown, d: InPlaceDownload, gets: ReadonlyArray<PlainGet | undefined>, signal?: AbortSignal): unknown {
  if (!(err instanceof SliceFailure)) return err;
  const f = err.failure;
  switch (f.kind) {
    case 'aborted':
      return signal?.reason ?? new Error('aborted');
    case 'expired':
      return new SapiCredentialsExpiredError({ where: `${d.where.slice(0, -1)}, slice=${f.index}]`, expiration: d.expiration });
    case 'http': // only slices with a GET are fetched
      return gets[f.index]!.failure(f.status, f.body, f.errorCode);
    case 'network':
      return new SapiTransferError({ code: SapiErrorCode.DOWNLOAD_FAILED, message: f.message, context: { object: d.objects[f.index]!.label, offset: f.written } });
    case 'size':
      return new SapiTransferError({ code: SapiErrorCode.DOWNLOAD_FAILED, message: f.message, context: { object: d.objects[f.index]!.label }, retryable: f.retryable });
    case 'internal':
      return new SapiTransferError({ code: SapiErrorCode.DOWNLOAD_FAILED, message: `the download thread failed: ${f.message}`, context: { destination: d.destination } });
  }
}

/** Reads and validates the manifest of a sliced file; returns the slice URIs in order. */
export async function readManifest(args: {
  file: DownloadableFile;
  s3?: S3Client;
  abs?: ContainerClient;
  gcs?: GcsClient;
  dispatcher?: Dispatcher;
  signal?: AbortSignal;
}): Promise<string[]> {
  const { file, s3, abs, gcs, signal } = args;
  let text: string;
  let label: string;
  if (gcs && file.gcsPath) {
    const key = `${file.gcsPath.key}manifest`;
    label = `gs://${gcs.bucket}/${key}`;
    const { body } = await gcsObject(gcs, key).get(0, signal);
    text = await streamToString(body);
  } else if (abs && file.absPath) {
    const name = `${file.absPath.name}manifest`;
    label = `azure container=${abs.containerName}, blob=${name}`;
    const { body } = await absObject(abs, name).get(0, signal);
    text = await streamToString(body);
  } else if (s3 && file.s3Path) {
    const key = `${file.s3Path.key}manifest`;
    label = `s3://${file.s3Path.bucket}/${key}`;
    try {
      const out = await s3.send(new GetObjectCommand({ Bucket: file.s3Path.bucket, Key: key }), { abortSignal: signal });
      text = await (out.Body as { transformToString(): Promise<string> }).transformToString();
    } catch (err) {
      throw mapS3Error(err, 'download', { bucket: file.s3Path.bucket, key }, signal);
    }
  } else if (file.url) {
    label = redactUrl(file.url);
    const { body } = await urlObject(args.dispatcher ?? defaultHttpPools().transfers, file.url).get(0, signal);
    text = await streamToString(body);
  } else {
    throw new SapiInvalidInputError(`file ${file.id ?? ''} has no s3Path or url to read its manifest from`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new SapiTransferError({ code: SapiErrorCode.DOWNLOAD_FAILED, message: `manifest is not JSON: ${JSON.stringify(excerptOf(text))}`, context: { manifest: label }, retryable: false });
  }
  const result = manifestSchema.safeParse(parsed);
  if (!result.success) {
    throw new SapiTransferError({
      code: SapiErrorCode.DOWNLOAD_FAILED,
      message: `manifest has an unexpected shape (${result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')})`,
      context: { manifest: label },
      retryable: false,
    });
  }
  return result.data.entries.map((e) => e.url);
}

/** `"a","b"\n`: RFC 4180 with every name enclosed, like the service's exports. */
export function headerLine(columns: readonly string[]): string {
  return `${columns.map((c) => `"${c.replace(/"/g, '""')}"`).join(',')}\n`;
}

/**
 * Downloads one object to `finalPath` through `<finalPath>.partial`, continuing a partial file with a Range
 * request. An existing `finalPath` whose size matches the store is kept.
 */
async function fetchToFile(obj: RemoteObject, finalPath: string, signal?: AbortSignal): Promise<{ bytes: number; fetched: boolean }> {
  const existing = await fileSize(finalPath);
  if (existing !== undefined) {
    const remote = await obj.size(signal);
    if (remote === undefined || remote === existing) return { bytes: existing, fetched: false };
    await unlink(finalPath);
  }
  const partial = `${finalPath}.partial`;
  let start = (await fileSize(partial)) ?? 0;
  const got = await obj.get(start, signal);
  if (!got.fromStart) start = 0;
  let written = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, cb: TransformCallback) {
      written += chunk.length;
      cb(null, chunk);
    },
  });
  try {
    await pipeline(got.body, counter, createWriteStream(partial, { flags: start > 0 ? 'a' : 'w', highWaterMark: WRITE_HIGH_WATER_MARK }), { signal });
  } catch (err) {
    if (signal?.aborted) throw signal.reason ?? err;
    throw err instanceof SapiError
      ? err
      : new SapiTransferError({ code: SapiErrorCode.DOWNLOAD_FAILED, message: 'download interrupted', context: { object: obj.label, offset: start + written }, cause: err });
  }
  const total = start + written;
  if (got.total !== undefined && total !== got.total) {
    throw new SapiTransferError({
      code: SapiErrorCode.DOWNLOAD_FAILED,
      message: `download ended early: ${total} of ${got.total} bytes`,
      context: { object: obj.label },
    });
  }
  await rename(partial, finalPath);
  return { bytes: total, fetched: true };
}

function s3Object(s3: S3Client, bucket: string, key: string): RemoteObject {
  const label = `s3://${bucket}/${key}`;
  return {
    label,
    gz: /\.gz$/i.test(key),
    async get(start, signal) {
      try {
        const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key, Range: start > 0 ? `bytes=${start}-` : undefined }), { abortSignal: signal });
        const total = start > 0 ? totalFromContentRange(out.ContentRange) : out.ContentLength;
        // A store that ignores Range answers the whole object: then we restart the file.
        const fromStart = start > 0 && out.ContentRange !== undefined;
        return { body: out.Body as Readable, total, fromStart };
      } catch (err) {
        if (start > 0 && s3ErrorInfo(err).name === 'InvalidRange') return { body: Readable.from([]), total: start, fromStart: true };
        throw mapS3Error(err, 'download', { bucket, key, offset: start || undefined }, signal);
      }
    },
    async size(signal) {
      try {
        return (await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }), { abortSignal: signal })).ContentLength;
      } catch (err) {
        throw mapS3Error(err, 'download', { bucket, key, step: 'head' }, signal);
      }
    },
    async plainGet(validSeconds) {
      return {
        url: await presignGetObject(s3, bucket, key, validSeconds),
        headers: {},
        failure: (status, body) => mapS3Error({ Code: s3ErrorCodeOf(body), $metadata: { httpStatusCode: status }, message: excerptOf(body) }, 'download', { bucket, key }) as SapiError,
      };
    },
  };
}

function absObject(container: ContainerClient, blobName: string): RemoteObject {
  const blob = container.getBlobClient(blobName);
  const context = { container: container.containerName, blob: blobName };
  return {
    label: `azure container=${container.containerName}, blob=${blobName}`,
    gz: /\.gz$/i.test(blobName),
    async get(start, signal) {
      try {
        const out = await blob.download(start, undefined, { abortSignal: signal });
        if (!out.readableStreamBody) throw new SapiTransferError({ code: SapiErrorCode.DOWNLOAD_FAILED, message: 'the store answered without a body', context });
        const total = start > 0 ? totalFromContentRange(out.contentRange) : out.contentLength;
        return { body: out.readableStreamBody as Readable, total, fromStart: start > 0 && out.contentRange !== undefined };
      } catch (err) {
        if (start > 0 && absErrorInfo(err).status === 416) return { body: Readable.from([]), total: start, fromStart: true };
        throw mapAbsError(err, 'download', { ...context, offset: start || undefined }, signal);
      }
    },
    async size(signal) {
      try {
        return (await blob.getProperties({ abortSignal: signal })).contentLength;
      } catch (err) {
        throw mapAbsError(err, 'download', { ...context, step: 'properties' }, signal);
      }
    },
    // the container client is made from the SAS connection string: the blob's URL carries the SAS
    plainGet: () =>
      Promise.resolve({
        url: blob.url,
        headers: {},
        failure: (status, body, errorCode) => mapAbsError({ statusCode: status, code: errorCode, message: excerptOf(body) }, 'download', context) as SapiError,
      }),
  };
}

function gcsObject(client: GcsClient, key: string): RemoteObject {
  return {
    label: `gs://${client.bucket}/${key}`,
    gz: /\.gz$/i.test(key),
    async get(start, signal) {
      const out = await client.getMedia(key, start, signal);
      if (out.statusCode === 416) {
        await out.body.resume();
        return { body: Readable.from([]), total: start, fromStart: true };
      }
      const total = start > 0 ? totalFromContentRange(out.contentRange) : out.contentLength;
      // a store that ignores Range answers the whole object (200): then we restart the file
      return { body: out.body, total, fromStart: start > 0 && out.statusCode === 206 };
    },
    size: (signal) => client.size(key, signal),
    plainGet: () => Promise.resolve({ ...client.mediaRequest(key), failure: (status, body) => gcsFailure(status, body, 'download', { bucket: client.bucket, key }) }),
  };
}

function urlObject(dispatcher: Dispatcher, url: string): RemoteObject {
  const label = redactUrl(url);
  const target = new URL(url);
  const request = async (headers: Record<string, string>, signal?: AbortSignal): Promise<Dispatcher.ResponseData> => {
    try {
      return await dispatcher.request({ origin: target.origin, path: target.pathname + target.search, method: 'GET', headers, signal, headersTimeout: 60_000, bodyTimeout: 300_000 });
    } catch (cause) {
      if (signal?.aborted) throw signal.reason ?? cause;
      throw new SapiTransferError({ code: SapiErrorCode.DOWNLOAD_FAILED, message: 'download request failed', context: { url: label }, cause });
    }
  };
  const failure = (status: number, body: string): SapiError =>
    // A presigned URL answers 403 once expired: the file detail must be fetched again.
    status === 403
      ? new SapiCredentialsExpiredError({ where: `download [url=${label}]`, serviceCode: `HTTP 403 ${excerptOf(body).slice(0, 80)}`.trim() })
      : new SapiTransferError({
          code: SapiErrorCode.DOWNLOAD_FAILED,
          message: `download answered ${status}${body ? ` ${JSON.stringify(excerptOf(body))}` : ''}`,
          context: { url: label },
          status,
          retryable: status >= 500 || status === 408 || status === 429,
        });
  const fail = async (res: Dispatcher.ResponseData): Promise<never> => {
    throw failure(res.statusCode, await res.body.text().catch(() => ''));
  };
  return {
    label,
    gz: /\.gz$/i.test(target.pathname),
    async get(start, signal) {
      const res = await request(start > 0 ? { range: `bytes=${start}-` } : {}, signal);
      if (res.statusCode === 416 && start > 0) {
        await res.body.dump();
        return { body: Readable.from([]), total: start, fromStart: true };
      }
      if (res.statusCode === 206) return { body: res.body, total: totalFromContentRange(headerOf(res.headers['content-range'])), fromStart: true };
      if (res.statusCode === 200) {
        const len = Number(headerOf(res.headers['content-length']));
        return { body: res.body, total: Number.isSafeInteger(len) ? len : undefined, fromStart: false };
      }
      return fail(res);
    },
    async size(signal) {
      // A presigned GET URL cannot be HEADed (the signature covers the method): ask for one byte instead.
      const res = await request({ range: 'bytes=0-0' }, signal);
      await res.body.dump();
      if (res.statusCode === 206) return totalFromContentRange(headerOf(res.headers['content-range']));
      if (res.statusCode === 200) {
        const len = Number(headerOf(res.headers['content-length']));
        return Number.isSafeInteger(len) ? len : undefined;
      }
      return undefined;
    },
    plainGet: () => Promise.resolve({ url, headers: {}, failure }),
  };
}

async function* concatSlices(workDir: string, count: number, decompress: readonly boolean[], header?: Buffer): AsyncGenerator<Buffer> {
  if (header) yield header;
  for (let i = 0; i < count; i++) {
    const file = createReadStream(join(workDir, String(i)), { highWaterMark: WRITE_HIGH_WATER_MARK });
    if (!decompress[i]) {
      for await (const chunk of file) yield chunk as Buffer;
      continue;
    }
    const gunzip = createGunzip();
    file.on('error', (err) => gunzip.destroy(err));
    file.pipe(gunzip);
    try {
      for await (const chunk of gunzip) yield chunk as Buffer;
    } catch (err) {
      if (isGzipError(err)) {
        throw new SapiTransferError({
          code: SapiErrorCode.DOWNLOAD_FAILED,
          message: 'slice is not valid gzip: pass gunzip: false to keep it compressed',
          context: { slice: i },
          retryable: false,
          cause: err,
        });
      }
      throw err;
    } finally {
      file.destroy();
    }
  }
}

function isGzipError(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'string' && code.startsWith('Z_');
}

function totalFromContentRange(value: string | undefined): number | undefined {
  const m = value ? /\/(\d+)\s*$/.exec(value) : null;
  return m ? Number(m[1]) : undefined;
}

function headerOf(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
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

const IDENTITY_FILE = '.source.json';

/** Creates the work folder, wiping it first when it holds slices of another file. */
async function prepareWorkDir(workDir: string, identity: string): Promise<void> {
  const marker = join(workDir, IDENTITY_FILE);
  const previous = await readFile(marker, 'utf8').catch(() => undefined);
  if (previous !== identity) {
    await rm(workDir, { recursive: true, force: true });
    await mkdir(workDir, { recursive: true });
    await writeFile(marker, identity);
  }
}

async function fileSize(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).size;
  } catch {
    return undefined;
  }
}

async function hashFile(path: string): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: WRITE_HIGH_WATER_MARK })) {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  return { bytes, sha256: hash.digest('hex') };
}

async function streamToString(body: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of body) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

