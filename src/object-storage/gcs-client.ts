/**
 * Google Cloud Storage over its JSON API with plain HTTP (undici): the few calls the plugin makes (resumable upload
 * sessions, one-shot media uploads, ranged media downloads, object metadata) with the service's OAuth access token
 * (`gcsUploadParams`, a file detail's `gcsCredentials`). The endpoint is `https://storage.googleapis.com` unless
 * `STORAGE_EMULATOR_HOST` names an emulator (fake-gcs-server), as for Google's own clients.
 */
import { type Readable } from 'node:stream';
import { type Dispatcher } from 'undici';
import { assertNotExpiring, whereOf } from './store-helpers';
import { SapiCredentialsExpiredError, SapiError, SapiErrorCode, SapiInvalidInputError, SapiTransferError, excerptOf } from '../errors';
import { DEFAULT_CREDENTIALS_MARGIN_MS } from './s3-client';
import { tracedRequest } from '../observability/traced-request';

/** The real service's JSON API root. */
const DEFAULT_GCS_ENDPOINT = 'https://storage.googleapis.com';

/** GCS credentials as the plugin keeps them (sealed): the service's `access_token` and `projectId`, and when they expire. */
export interface GcsCredentials {
  /** OAuth bearer token: a secret (never logged, sealed in history). */
  access_token: string;
  projectId: string;
  /** ISO 8601: when the service answered plus its `expires_in` seconds. */
  expiration: string;
}

/** Turns the service's `{access_token, expires_in, projectId}` into {@link GcsCredentials}, `expires_in` counted from `nowMs`. */
export function gcsCredentialsOf(fields: { access_token: string; expires_in: number; projectId: string }, nowMs: number = Date.now()): GcsCredentials {
  return { access_token: fields.access_token, projectId: fields.projectId, expiration: new Date(nowMs + fields.expires_in * 1000).toISOString() };
}

/** Throws `SAPI_CREDENTIALS_EXPIRED` (retryable) when the token expires within `marginMs`. */
export function assertGcsCredentialsFresh(
  credentials: GcsCredentials | undefined,
  where: string,
  marginMs: number = DEFAULT_CREDENTIALS_MARGIN_MS,
  nowMs: number = Date.now(),
): void {
  assertNotExpiring(credentials?.expiration, where, marginMs, nowMs);
}

const GS_URL = /^gs:\/\/([^/]+)\/(.+)$/;

/** Splits a manifest entry of a GCS file, `gs://<bucket>/<key>`. */
export function parseGsUrl(url: string): { bucket: string; key: string } {
  const m = GS_URL.exec(url);
  if (!m) throw new SapiInvalidInputError(`expected gs://<bucket>/<key>, got ${JSON.stringify(url)}`);
  return { bucket: m[1] as string, key: m[2] as string };
}

/** The manifest entry URL of an object, as the service writes it. */
export function gsUrl(bucket: string, key: string): string {
  return `gs://${bucket}/${key}`;
}

/** State of a resumable upload session, from the store. */
export type GcsSessionStatus =
  /** Still open: the store holds `persisted` bytes (the next chunk starts there). */
  | { state: 'open'; persisted: number }
  /** Finished: the object exists. */
  | { state: 'complete'; object: GcsObjectResource }
  /** Unknown to the store (expired after a week, cancelled, or the store restarted). */
  | { state: 'gone' };

/** The fields of an object resource we read. */
interface GcsObjectResource {
  name: string;
  bucket: string;
  /** Decimal string. */
  size: string;
  /** Base64 MD5 of the stored bytes. */
  md5Hash?: string;
}

type Context = Record<string, string | number | undefined>;

/** A GCS JSON API client for one bucket, with one access token (or none: chunks of a session need none). */
export class GcsClient {
  private readonly origin: string;
  private readonly basePath: string;

  constructor(private readonly options: { endpoint?: string; credentials?: GcsCredentials; bucket: string; dispatcher: Dispatcher }) {
    const endpoint = new URL(options.endpoint ?? DEFAULT_GCS_ENDPOINT);
    this.origin = endpoint.origin;
    this.basePath = endpoint.pathname.replace(/\/$/, '');
  }

  get bucket(): string {
    return this.options.bucket;
  }

  private auth(): Record<string, string> {
    const token = this.options.credentials?.access_token;
    return token ? { authorization: `Bearer ${token}` } : {};
  }

  private objectPath(key: string): string {
    return `${this.basePath}/storage/v1/b/${encodeURIComponent(this.options.bucket)}/o/${encodeURIComponent(key)}`;
  }

  private async send(op: 'upload' | 'download', context: Context, request: Dispatcher.RequestOptions, signal?: AbortSignal): Promise<Dispatcher.ResponseData> {
    try {
      const attributes = {
        'gcs.bucket': this.options.bucket,
        'gcs.key': typeof context.key === 'string' ? context.key : undefined,
        'sapi.step': typeof context.step === 'string' ? context.step : undefined,
      };
      return await tracedRequest(
        this.options.dispatcher,
        { headersTimeout: 60_000, bodyTimeout: 300_000, ...request, signal },
        `GCS ${request.method}`,
        attributes,
      );
    } catch (cause) {
      if (signal?.aborted) throw signal.reason ?? cause;
      throw new SapiTransferError({
        code: op === 'upload' ? SapiErrorCode.UPLOAD_FAILED : SapiErrorCode.DOWNLOAD_FAILED,
        message: `${op} request failed`,
        context,
        cause,
      });
    }
  }

  /**
   * Opens a resumable upload session for `key` (`POST …?uploadType=resumable`); returns its URI. `size`, when known,
   * is declared (`X-Upload-Content-Length`) so the store refuses a different length.
   */
  async createSession(key: string, options: { contentType: string; size?: number; signal?: AbortSignal }): Promise<string> {
    const context = { bucket: this.options.bucket, key, step: 'create session' };
    const headers: Record<string, string> = { ...this.auth(), 'content-type': 'application/json; charset=UTF-8', 'x-upload-content-type': options.contentType };
    if (options.size !== undefined) headers['x-upload-content-length'] = String(options.size);
    const res = await this.send(
      'upload',
      context,
      {
        origin: this.origin,
        path: `${this.basePath}/upload/storage/v1/b/${encodeURIComponent(this.options.bucket)}/o?uploadType=resumable&name=${encodeURIComponent(key)}`,
        method: 'POST',
        headers,
        body: JSON.stringify({ name: key, contentType: options.contentType }),
      },
      options.signal,
    );
    if (res.statusCode !== 200 && res.statusCode !== 201) return failed(res, 'upload', context);
    await res.body.dump();
    const location = headerOf(res.headers.location);
    if (!location)
      throw new SapiTransferError({
        code: SapiErrorCode.UPLOAD_FAILED,
        message: 'the store opened a session without a Location header',
        context,
        retryable: false,
      });
    return location;
  }

  /**
   * Sends `data` as the bytes from `start` of a session (`Content-Range: bytes start-end/<total or *>`; an empty final
   * chunk is `bytes *\/<total>`). Returns the session's status after it: `open` with what it persisted (may be less
   * than sent: the rest must be sent again), or `complete` after the final chunk.
   */
  async putChunk(
    sessionUri: string,
    start: number,
    data: Buffer,
    total: number | undefined,
    context: Context,
    signal?: AbortSignal,
  ): Promise<GcsSessionStatus> {
    const range = data.length === 0 ? `bytes */${total ?? '*'}` : `bytes ${start}-${start + data.length - 1}/${total ?? '*'}`;
    const target = new URL(sessionUri);
    const res = await this.send(
      'upload',
      { ...context, offset: start },
      {
        origin: target.origin,
        path: target.pathname + target.search,
        method: 'PUT',
        headers: { 'content-range': range, 'content-length': String(data.length) },
        body: data,
      },
      signal,
    );
    return sessionStatus(res, { ...context, offset: start });
  }

  /** Asks a session how many bytes it persisted (`PUT`, no body, `Content-Range: bytes *\/<total or *>`). */
  async querySession(sessionUri: string, total: number | undefined, context: Context, signal?: AbortSignal): Promise<GcsSessionStatus> {
    const target = new URL(sessionUri);
    const res = await this.send(
      'upload',
      { ...context, step: 'query session' },
      {
        origin: target.origin,
        path: target.pathname + target.search,
        method: 'PUT',
        headers: { 'content-range': `bytes */${total ?? '*'}`, 'content-length': '0' },
      },
      signal,
    );
    return sessionStatus(res, { ...context, step: 'query session' });
  }

  /** Stores a small object in one request (`uploadType=media`): manifests. */
  async putObject(key: string, body: Buffer, contentType: string, signal?: AbortSignal): Promise<void> {
    const context = { bucket: this.options.bucket, key };
    const res = await this.send(
      'upload',
      context,
      {
        origin: this.origin,
        path: `${this.basePath}/upload/storage/v1/b/${encodeURIComponent(this.options.bucket)}/o?uploadType=media&name=${encodeURIComponent(key)}`,
        method: 'POST',
        headers: { ...this.auth(), 'content-type': contentType, 'content-length': String(body.length) },
        body,
      },
      signal,
    );
    if (res.statusCode !== 200) return failed(res, 'upload', context);
    await res.body.dump();
  }

  /** The object's bytes from `start` (`alt=media`, `Range: bytes=start-`). */
  async getMedia(
    key: string,
    start: number,
    signal?: AbortSignal,
  ): Promise<{ statusCode: number; body: Readable; contentRange?: string; contentLength?: number }> {
    const context = { bucket: this.options.bucket, key, offset: start || undefined };
    const res = await this.send(
      'download',
      context,
      {
        origin: this.origin,
        path: `${this.objectPath(key)}?alt=media`,
        method: 'GET',
        headers: { ...this.auth(), ...(start > 0 ? { range: `bytes=${start}-` } : {}) },
      },
      signal,
    );
    if (res.statusCode === 416 && start > 0) return { statusCode: 416, body: res.body };
    if (res.statusCode !== 200 && res.statusCode !== 206) return failed(res, 'download', context);
    const length = Number(headerOf(res.headers['content-length']));
    return {
      statusCode: res.statusCode,
      body: res.body,
      contentRange: headerOf(res.headers['content-range']),
      contentLength: Number.isSafeInteger(length) ? length : undefined,
    };
  }

  /** The GET of the whole object's bytes as a plain request (the download thread sends it). */
  mediaRequest(key: string): { url: string; headers: Record<string, string> } {
    return { url: `${this.origin}${this.objectPath(key)}?alt=media`, headers: this.auth() };
  }

  /** Names of the objects that start with `prefix` (every page of `objects.list`). */
  async list(prefix: string, signal?: AbortSignal): Promise<string[]> {
    const context = { bucket: this.options.bucket, prefix, step: 'list' };
    const names: string[] = [];
    let pageToken: string | undefined;
    do {
      const query = `prefix=${encodeURIComponent(prefix)}&fields=${encodeURIComponent('items(name),nextPageToken')}${pageToken ? `&pageToken=${encodeURIComponent(pageToken)}` : ''}`;
      const path = `${this.basePath}/storage/v1/b/${encodeURIComponent(this.options.bucket)}/o?${query}`;
      const res = await this.send('download', context, { origin: this.origin, path, method: 'GET', headers: this.auth() }, signal);
      if (res.statusCode !== 200) return failed(res, 'download', context);
      const page = (await res.body.json()) as { items?: Array<{ name: string }>; nextPageToken?: string };
      for (const item of page.items ?? []) names.push(item.name);
      pageToken = page.nextPageToken;
    } while (pageToken);
    return names;
  }

  /** Deletes an object; a missing one (404) is not an error. */
  async deleteObject(key: string, signal?: AbortSignal): Promise<void> {
    const context = { bucket: this.options.bucket, key, step: 'delete' };
    const res = await this.send('upload', context, { origin: this.origin, path: this.objectPath(key), method: 'DELETE', headers: this.auth() }, signal);
    if (res.statusCode !== 204 && res.statusCode !== 200 && res.statusCode !== 404) return failed(res, 'upload', context);
    await res.body.dump();
  }

  /** The object's size in bytes. */
  async size(key: string, signal?: AbortSignal): Promise<number> {
    const context = { bucket: this.options.bucket, key, step: 'metadata' };
    const res = await this.send('download', context, { origin: this.origin, path: this.objectPath(key), method: 'GET', headers: this.auth() }, signal);
    if (res.statusCode !== 200) return failed(res, 'download', context);
    return Number(((await res.body.json()) as GcsObjectResource).size);
  }
}

async function sessionStatus(res: Dispatcher.ResponseData, context: Context): Promise<GcsSessionStatus> {
  if (res.statusCode === 308) {
    await res.body.dump();
    // `Range: bytes=0-<last persisted byte>`; absent when nothing is persisted yet
    const m = /^bytes=0-(\d+)$/.exec(headerOf(res.headers.range) ?? '');
    return { state: 'open', persisted: m ? Number(m[1]) + 1 : 0 };
  }
  if (res.statusCode === 200 || res.statusCode === 201) return { state: 'complete', object: (await res.body.json()) as GcsObjectResource };
  if (res.statusCode === 404 || res.statusCode === 410) {
    await res.body.dump();
    return { state: 'gone' };
  }
  return failed(res, 'upload', context);
}

/**
 * Maps a failed answer to the registry: 401/403 (token expired or refused) → `SAPI_CREDENTIALS_EXPIRED`; other 4xx
 * (but 408, 429) → non-retryable transfer error; 5xx, 408, 429 → retryable.
 */
async function failed(res: Dispatcher.ResponseData, op: 'upload' | 'download', context: Context): Promise<never> {
  throw gcsFailure(res.statusCode, await res.body.text().catch(() => ''), op, context);
}

/** The error of a GCS answer: 401/403 → `SAPI_CREDENTIALS_EXPIRED`; 5xx, 408, 429 retryable; other 4xx not. */
export function gcsFailure(status: number, text: string, op: 'upload' | 'download', context: Context): SapiError {
  const where = whereOf(op, context);
  if (status === 401 || status === 403) return new SapiCredentialsExpiredError({ where, serviceCode: `HTTP ${status}` });
  return new SapiTransferError({
    code: op === 'upload' ? SapiErrorCode.UPLOAD_FAILED : SapiErrorCode.DOWNLOAD_FAILED,
    message: `${op} answered ${status}${text ? ` ${JSON.stringify(excerptOf(text))}` : ''}`,
    context,
    status,
    retryable: status >= 500 || status === 408 || status === 429,
  });
}

function headerOf(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/** Our own errors and aborts as they are; anything else as a retryable transfer error. */
export function asGcsTransferError(err: unknown, op: 'upload' | 'download', context: Context, signal?: AbortSignal): unknown {
  if (err instanceof SapiError) return err;
  if (signal?.aborted) return signal.reason ?? err;
  return new SapiTransferError({
    code: op === 'upload' ? SapiErrorCode.UPLOAD_FAILED : SapiErrorCode.DOWNLOAD_FAILED,
    message: `${op} failed`,
    context,
    cause: err,
  });
}
