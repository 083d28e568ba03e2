/**
 * Resumable upload to Google Cloud Storage with the service's access token: the JSON API's resumable upload
 * protocol, with the same durability as the S3 multipart path.
 *
 * - One session per object (`POST …?uploadType=resumable`); the source is read once, sequentially, and sent in
 *   chunks of `partSizeBytes` rounded up to a multiple of 256 KiB (the store's chunk granularity). A session takes its
 *   chunks in order, one at a time: memory ≈ 2 chunks (the one in flight and the next filling), whatever the file
 *   size; sliced files upload their slices in parallel instead.
 * - After each chunk the store answers what it persisted (308 + `Range`); the session URI and that offset are
 *   reported (heartbeat). A retry (another worker, after a crash) asks the session what it persisted
 *   (`Content-Range: bytes *\/<size>`, which also covers a chunk that landed after the last heartbeat) and sends only
 *   the bytes from there: the source is read again from its start (for the checksum) but nothing below the
 *   persisted offset goes up again. A session the store no longer knows starts over.
 * - The finished object's size and MD5 are checked against what was sent.
 * - `gzip` compresses on the fly; the compressed stream is not guaranteed to be byte-identical on a second run, so a
 *   gzip upload never resumes a session: it opens a new one.
 * - Chunk requests carry no token (the session URI is the grant): a session outlives the token that opened it.
 */
import { createHash } from 'node:crypto';
import { type Dispatcher } from 'undici';
import { SapiErrorCode, SapiInvalidInputError, SapiTransferError } from '../errors';
import { assertGcsCredentialsFresh, GcsClient, type GcsCredentials, type GcsSessionStatus } from './gcs-client';
import { DEFAULT_PART_SIZE_BYTES } from './multipart-upload';
import { type StoredObject } from './object-store';
import { assertSourceUnchanged, runPartPipeline } from './part-pipeline';
import { DEFAULT_CREDENTIALS_MARGIN_MS, throwIfAborted } from './s3-client';
import { openSource, type ByteSource } from './sources';

/** The store's chunk granularity: every chunk but the last is a multiple of 256 KiB. */
export const GCS_CHUNK_GRANULARITY = 256 * 1024;

/** Progress of a resumable upload: what a retry needs to resume (JSON; the session URI is a grant, seal it). */
export interface GcsUploadState {
  bucket: string;
  key: string;
  /** The session's URI: whoever holds it may upload to the object until it finishes (a week at most). */
  sessionUri: string;
  chunkSizeBytes: number;
  /** Bytes the store confirmed it persisted. */
  bytesSent: number;
}

interface UploadGcsObjectOptions {
  /** Client to use; otherwise one is made from `credentials`, `endpoint` and `dispatcher`. */
  client?: GcsClient;
  credentials?: GcsCredentials;
  endpoint?: string;
  dispatcher?: Dispatcher;
  bucket: string;
  key: string;
  /** A local path or URI, or a {@link ByteSource}. */
  source: string | ByteSource;
  /** Chunk size wish; rounded up to a multiple of 256 KiB. Default {@link DEFAULT_PART_SIZE_BYTES}. */
  partSizeBytes?: number;
  /** State of an earlier attempt. */
  resume?: GcsUploadState;
  /** Called after each chunk the store confirmed. Keep it cheap (heartbeat). */
  onProgress?: (state: GcsUploadState) => void;
  contentType?: string;
  gzip?: boolean;
  credentialsMarginMs?: number;
  signal?: AbortSignal;
}

/** What {@link uploadGcsObject} stored: `parts` are chunks, `partsUploaded` those sent wholly or partly by this call; `resumed` when an earlier attempt's session was continued. */
interface UploadGcsObjectResult extends StoredObject {
  bucket: string;
  key: string;
  /** Bytes sent by this call. */
  bytesUploaded: number;
  sha256: string;
  /** Chunk buffers this call allocated. */
  partBuffers: number;
}

/** The chunk size used: the wish rounded up to a multiple of 256 KiB. */
export function resolveChunkSize(wish: number | undefined): number {
  const size = wish ?? DEFAULT_PART_SIZE_BYTES;
  if (!Number.isSafeInteger(size) || size < 1) throw new SapiInvalidInputError(`partSizeBytes must be a positive integer, got ${size}`);
  return Math.ceil(size / GCS_CHUNK_GRANULARITY) * GCS_CHUNK_GRANULARITY;
}

function clientOf(
  options: { client?: GcsClient; credentials?: GcsCredentials; endpoint?: string; dispatcher?: Dispatcher; bucket: string },
  where: string,
): GcsClient {
  if (options.client) return options.client;
  if (!options.credentials || !options.dispatcher) throw new SapiInvalidInputError(`${where}: needs a GCS client, or gcsCredentials and a dispatcher`);
  return new GcsClient({ endpoint: options.endpoint, credentials: options.credentials, bucket: options.bucket, dispatcher: options.dispatcher });
}

/** Uploads a source to one object through a resumable session. See the module doc. */
export async function uploadGcsObject(options: UploadGcsObjectOptions): Promise<UploadGcsObjectResult> {
  const { bucket, key, signal } = options;
  if (!bucket || !key) throw new SapiInvalidInputError(`uploadGcsObject needs a bucket and a key (got bucket=${bucket}, key=${key})`);
  const margin = options.credentialsMarginMs ?? DEFAULT_CREDENTIALS_MARGIN_MS;
  const context = { bucket, key };
  const where = (extra = ''): string => `upload [bucket=${bucket}, key=${key}${extra}]`;
  const client = clientOf(options, where());
  const source = typeof options.source === 'string' ? await openSource(options.source, { signal }) : options.source;
  const total = options.gzip ? undefined : source.size;
  const contentType = options.contentType ?? 'application/octet-stream';

  // The session: the earlier attempt's, at the offset the store says it persisted, or a new one.
  const previous = options.resume;
  let chunkSize = resolveChunkSize(options.partSizeBytes);
  let sessionUri: string | undefined;
  let persisted = 0;
  let finished: GcsSessionStatus | undefined;
  if (previous && !options.gzip && previous.bucket === bucket && previous.key === key && previous.sessionUri) {
    const status = await client.querySession(previous.sessionUri, total, context, signal);
    if (status.state !== 'gone') {
      sessionUri = previous.sessionUri;
      chunkSize = previous.chunkSizeBytes;
      if (status.state === 'open') persisted = status.persisted;
      else finished = status;
    }
  }
  const resumed = sessionUri !== undefined;
  if (!sessionUri) {
    assertGcsCredentialsFresh(options.credentials, where(), margin);
    sessionUri = await client.createSession(key, { contentType, size: total, signal });
  }
  const session = sessionUri;
  const report = (): void => options.onProgress?.({ bucket, key, sessionUri: session, chunkSizeBytes: chunkSize, bytesSent: persisted });
  report();

  const md5 = createHash('md5');
  let parts = 0;
  let partsUploaded = 0;
  let bytesUploaded = 0;

  /** Sends the part of `data` (at `start`) the store has not persisted yet; `final` closes the session. */
  const send = async (start: number, data: Buffer, final: boolean): Promise<void> => {
    const end = start + data.length;
    const size = final ? end : total;
    while (finished === undefined && (persisted < end || (final && data.length === 0) || (final && persisted === end))) {
      throwIfAborted(signal);
      if (persisted < start) {
        throw new SapiTransferError({
          code: SapiErrorCode.UPLOAD_FAILED,
          message: `the session persisted ${persisted} bytes, before this chunk's ${start}`,
          context,
          retryable: true,
        });
      }
      const rest = data.subarray(persisted - start);
      const status = await client.putChunk(session, persisted, rest, size, context, signal);
      bytesUploaded += rest.length;
      if (status.state === 'gone') {
        throw new SapiTransferError({
          code: SapiErrorCode.UPLOAD_FAILED,
          message: 'the store no longer knows the upload session',
          context: { ...context, offset: persisted },
        });
      }
      if (status.state === 'complete') {
        finished = status;
        persisted = end;
      } else {
        if (status.persisted <= persisted && rest.length > 0) {
          throw new SapiTransferError({
            code: SapiErrorCode.UPLOAD_FAILED,
            message: `the store persisted nothing of a ${rest.length}-byte chunk`,
            context: { ...context, offset: persisted },
          });
        }
        persisted = status.persisted;
        if (final && persisted >= end) {
          throw new SapiTransferError({
            code: SapiErrorCode.UPLOAD_FAILED,
            message: 'the store kept the session open after its final chunk',
            context: { ...context, offset: persisted },
          });
        }
      }
      report();
    }
  };

  // one session takes its chunks in order, one at a time; a chunk is held back until the next (or the end) shows
  // whether it is the last, which closes the session
  const read = await runPartPipeline({
    source,
    partSize: chunkSize,
    concurrency: 1,
    gzip: options.gzip,
    lookahead: true,
    context: { ...context, source: source.description },
    signal,
    part(index, data, final) {
      md5.update(data);
      const start = (index - 1) * chunkSize;
      if (data.length > 0 || !final || parts === 0) parts++;
      if (final ? finished === undefined : start + data.length > persisted) partsUploaded++; // the chunk before is settled
      return () => send(start, data, final);
    },
  });
  const { sourceBytes, storedBytes } = read;
  assertSourceUnchanged(source, sourceBytes, options.gzip, context);
  const object = finished?.state === 'complete' ? finished.object : undefined;
  const expectedMd5 = md5.digest('base64');
  if (!object || Number(object.size) !== storedBytes || (object.md5Hash !== undefined && object.md5Hash !== expectedMd5)) {
    throw new SapiTransferError({
      code: SapiErrorCode.CHECKSUM_MISMATCH,
      message: `the stored object differs from what was sent: ${object ? `size ${object.size}, md5 ${object.md5Hash}` : 'no object'}; expected size ${storedBytes}, md5 ${expectedMd5}`,
      context,
      retryable: true,
    });
  }
  return {
    bucket,
    key,
    parts,
    partsUploaded,
    bytesUploaded,
    bytes: storedBytes,
    sourceBytes,
    sha256: read.sha256 as string,
    resumed,
    partBuffers: read.partBuffers,
  };
}
