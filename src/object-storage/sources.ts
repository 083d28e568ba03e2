/**
 * Byte sources for uploads: one abstraction, `{ size?, open(start) }`, over a local path, an HTTP(S) URL (Range
 * requests for resume, skipping bytes when the server ignores Range) and an `s3://bucket/key` object (default AWS
 * credentials chain, GetObject with Range). `open(start)` lets a resumed upload restart mid-file.
 */
import { createReadStream } from 'node:fs';
import { stat, type FileHandle } from 'node:fs/promises';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { GetObjectCommand, HeadObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { type Dispatcher } from 'undici';
import { defaultHttpPools, redactUrl } from '../http';
import { tracedRequest } from '../observability/traced-request';
import { SapiErrorCode, SapiInvalidInputError, SapiTransferError } from '../errors';
import { forbiddenCause } from '../security/network';
import { createS3Client, mapS3Error, parseS3Uri } from './s3-client';

/** Something we can read bytes from, from any offset. */
export interface ByteSource {
  /** For messages and logs: a path, a URL without its query (signatures are secrets), or an `s3://` URI. */
  readonly description: string;
  /** Size in bytes, when known up front. */
  readonly size?: number;
  /** A stream of the bytes from offset `start` (0-based) to the end. */
  open(start: number, signal?: AbortSignal): Promise<Readable>;
  /**
   * A local file's path: an upload then reads its parts straight into the part buffers with positional reads (no
   * stream, no copy), see `part-pipeline.ts`.
   */
  readonly path?: string;
  /**
   * Opens the local file at `path` checked on its descriptor (see `security/local-files.ts`): the parts are read
   * from this, not from a second open by name. Absent: `path` is opened as it is.
   */
  openHandle?(): Promise<FileHandle>;
}

/** Stream buffer size of local file reads: 1 MiB (fewer syscalls than the 64 KiB default). */
export const FILE_READ_HIGH_WATER_MARK = 1024 * 1024;

interface OpenSourceOptions {
  /** S3 client for `s3://` sources; default: {@link createS3Client} with the default credentials chain. */
  s3?: S3Client;
  /** undici dispatcher for HTTP(S) sources; default: `defaultHttpPools().transfers` (the plugin passes its own). */
  dispatcher?: Dispatcher;
  signal?: AbortSignal;
  /**
   * Called before an HTTP(S) source's redirect is followed, with where it leads; throwing refuses it (nothing is sent
   * there). With it, redirects are followed here, hop by hop (at most 5); the confinement checks each hop's whole URL
   * against the worker's allow-list. Default: the dispatcher's own redirects.
   */
  checkRedirect?: (to: URL, from: URL) => void;
}

/** Redirects an HTTP(S) source follows when it checks each hop. */
const MAX_SOURCE_REDIRECTS = 5;
const REDIRECT_STATUSES = [300, 301, 302, 303, 307, 308];

/**
 * {@link tracedRequest} of `url`, following redirects hop by hop when `check` is given (the dispatcher's own redirect
 * interceptor switched off for it), `check` seeing each hop before it is sent.
 */
async function requestChecked(
  dispatcher: Dispatcher,
  url: string,
  options: Omit<Dispatcher.RequestOptions, 'origin' | 'path'>,
  name: string,
  attributes: Record<string, string | undefined>,
  check: ((to: URL, from: URL) => void) | undefined,
): Promise<Dispatcher.ResponseData> {
  if (!check) return tracedRequest(dispatcher, { ...originAndPath(url), ...options }, name, attributes);
  let current = new URL(url);
  for (let hop = 0; ; hop++) {
    // `maxRedirections: 0` switches off the pool's redirect interceptor for this request (its types omit the field)
    const res = await tracedRequest(
      dispatcher,
      { ...originAndPath(current.href), ...options, maxRedirections: 0 } as Dispatcher.RequestOptions,
      name,
      attributes,
    );
    const header = res.headers.location;
    const location = Array.isArray(header) ? header[0] : header;
    if (!REDIRECT_STATUSES.includes(res.statusCode) || location === undefined || hop >= MAX_SOURCE_REDIRECTS) return res;
    let to: URL;
    try {
      to = new URL(location, current);
    } catch {
      return res;
    }
    await res.body.dump();
    check(to, current);
    current = to;
  }
}

/**
 * Opens a source by URI: `s3://bucket/key`, `http(s)://…`, `file://…` or a local path.
 * Probes the size (stat, HEAD, HeadObject) once.
 */
export async function openSource(uri: string, options: OpenSourceOptions = {}): Promise<ByteSource> {
  if (/^s3:\/\//i.test(uri)) return s3Source(uri, options);
  if (/^https?:\/\//i.test(uri)) return httpSource(uri, options);
  if (/^file:\/\//i.test(uri)) return fileSource(new URL(uri).pathname);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(uri)) {
    throw new SapiInvalidInputError(`unsupported source ${JSON.stringify(redactUrl(uri))}: use a local path, http(s)://, file:// or s3://`);
  }
  return fileSource(uri);
}

/** A local file. */
export async function fileSource(path: string): Promise<ByteSource> {
  let size: number;
  try {
    const st = await stat(path);
    if (!st.isFile()) throw new SapiInvalidInputError(`source ${path} is not a regular file`);
    size = st.size;
  } catch (err) {
    if (err instanceof SapiInvalidInputError) throw err;
    throw new SapiInvalidInputError(`source ${path} cannot be read: ${(err as Error).message} (the path must exist on the worker's host)`);
  }
  return {
    description: path,
    size,
    path,
    async open(start) {
      return createReadStream(path, { start, highWaterMark: FILE_READ_HIGH_WATER_MARK });
    },
  };
}

/** Bytes in memory (tests, small generated content). */
export function bufferSource(data: Buffer, description = 'buffer'): ByteSource {
  return {
    description,
    size: data.length,
    async open(start) {
      return Readable.from([data.subarray(start)]);
    },
  };
}

/** An HTTP(S) URL. Resumes with `Range`; when the server ignores it, skips the first bytes of a full response. */
export async function httpSource(url: string, options: OpenSourceOptions = {}): Promise<ByteSource> {
  const dispatcher = options.dispatcher ?? defaultHttpPools().transfers;
  const description = redactUrl(url);
  let size: number | undefined;
  try {
    const head = await requestChecked(
      dispatcher,
      url,
      { method: 'HEAD', signal: options.signal, headersTimeout: 30_000 },
      'source HEAD',
      {},
      options.checkRedirect,
    );
    await head.body.dump();
    const len = Number(head.headers['content-length']);
    if (head.statusCode >= 200 && head.statusCode < 300 && Number.isSafeInteger(len) && len >= 0 && !head.headers['content-encoding']) size = len;
  } catch (err) {
    // the input policy refused the connection: nothing was sent, and nothing will be
    const forbidden = forbiddenCause(err);
    if (forbidden) throw forbidden;
    // HEAD is optional: some servers refuse it. The size stays unknown.
  }
  return {
    description,
    size,
    async open(start, signal) {
      const headers: Record<string, string> = start > 0 ? { range: `bytes=${start}-` } : {};
      let res: Dispatcher.ResponseData;
      try {
        res = await requestChecked(
          dispatcher,
          url,
          { method: 'GET', headers, signal, headersTimeout: 60_000, bodyTimeout: 300_000 },
          'source GET',
          { 'http.request.header.range': headers.range },
          options.checkRedirect,
        );
      } catch (cause) {
        if (signal?.aborted) throw signal.reason ?? cause;
        const forbidden = forbiddenCause(cause);
        if (forbidden) throw forbidden;
        throw new SapiTransferError({
          code: SapiErrorCode.DOWNLOAD_FAILED,
          message: 'reading the source failed',
          context: { source: description, offset: start },
          cause,
        });
      }
      if (res.statusCode === 206 || (res.statusCode === 200 && start === 0)) return res.body;
      if (res.statusCode === 200) return res.body.pipe(skipBytes(start));
      // the body is never echoed: what a refused or failing service answers is not the caller's to read
      await res.body.dump().catch(() => undefined);
      const retryable = res.statusCode >= 500 || res.statusCode === 408 || res.statusCode === 429;
      throw new SapiTransferError({
        code: SapiErrorCode.DOWNLOAD_FAILED,
        message: `source answered HTTP ${res.statusCode}`,
        context: { source: description, offset: start },
        status: res.statusCode,
        retryable,
      });
    },
  };
}

/** An object in S3 (or MinIO), read with the default credentials chain unless a client is given. */
export async function s3Source(uri: string, options: OpenSourceOptions = {}): Promise<ByteSource> {
  const { bucket, key } = parseS3Uri(uri);
  const s3 = options.s3 ?? createS3Client();
  let size: number | undefined;
  try {
    const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }), { abortSignal: options.signal });
    size = head.ContentLength;
  } catch (err) {
    throw mapS3Error(err, 'download', { source: uri }, options.signal);
  }
  return {
    description: uri,
    size,
    async open(start, signal) {
      try {
        const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key, Range: start > 0 ? `bytes=${start}-` : undefined }), {
          abortSignal: signal,
        });
        return out.Body as Readable;
      } catch (err) {
        throw mapS3Error(err, 'download', { source: uri, offset: start }, signal);
      }
    },
  };
}

/** Drops the first `n` bytes of a stream. */
function skipBytes(n: number): Transform {
  let remaining = n;
  return new Transform({
    transform(chunk: Buffer, _enc, cb: TransformCallback) {
      if (remaining <= 0) return cb(null, chunk);
      if (chunk.length <= remaining) {
        remaining -= chunk.length;
        return cb();
      }
      const rest = chunk.subarray(remaining);
      remaining = 0;
      cb(null, rest);
    },
  });
}

function originAndPath(url: string): { origin: string; path: string } {
  const u = new URL(url);
  return { origin: u.origin, path: u.pathname + u.search };
}
