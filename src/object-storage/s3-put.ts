/**
 * PUTs of an upload with the service's temporary credentials, signed here (SigV4, `@smithy/signature-v4`) and sent
 * through the worker's undici pool, without an AWS SDK client: one PutObject of a small body (a small import's file goes
 * up in one request, and a client built for it — its credentials are its own — cost more CPU and allocation than the
 * rest of its upload), and the UploadPart requests of a multipart upload (through the SDK client, a 256 MiB upload
 * cost 0.15–0.19 CPU-s per GB more in one process, ~1.5 ms per 8 MiB part: 13–15 % of the upload's CPU).
 *
 * What the SDK decides is still the SDK's: the request (endpoint, path or virtual-host style, region, the key's
 * encoding, the query) is built by a client's middleware once per region, endpoint, bucket and operation, on one
 * process-wide client that never sends anything (see `builtRequest`), and the other keys of the bucket reuse it, their
 * key encoded as the SDK encodes it (checked on the first key; a bucket where it differs is built for each key). What
 * the SDK's client did around the call is done here: its retries (network errors, 5xx, 429 and throttling codes; at
 * most {@link DEFAULT_S3_MAX_ATTEMPTS} attempts, exponential backoff with jitter), each bounded by the activity's
 * deadline (`retryFits`), and S3's errors as the SDK reports them (`Code`, status), which `mapS3Error` maps to the
 * registry. Redirects are never followed (the SDK does not follow them either): the signature is the endpoint's.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { PutObjectCommand, UploadPartCommand, type S3Client } from '@aws-sdk/client-s3';
import { SignatureV4 } from '@smithy/signature-v4';
import { type Dispatcher } from 'undici';
import { backoffDelayMs } from '../http/backoff';
import { attemptBudgetMs, retryFits, type Deadline } from '../http/deadline';
import { excerptOf } from '../errors';
import { withSpan, type SpanHandle } from '../observability/spans';
import {
  builtRequest,
  createS3Client,
  DEFAULT_S3_MAX_ATTEMPTS,
  hostOf,
  requestFromTemplate,
  requestTemplateOf,
  s3ErrorCodeOf,
  s3SpanAttributes,
  type BuiltRequest,
  type RequestTemplate,
  type TemporaryCredentials,
} from './s3-client';

/** Per-attempt wait for the answer's headers and for each chunk of its body, as the SDK client's `requestTimeout`. */
const PUT_TIMEOUT_MS = 120_000;
/** First retry waits up to this (ms, jittered), doubling: the SDK's standard strategy. */
const RETRY_BASE_MS = 100;
/** Longest wait before a retry (ms), as the SDK's. */
const RETRY_MAX_MS = 20_000;
/** S3 error codes the SDK retries whatever the status (throttling, transient). */
const RETRYABLE_CODES = new Set([
  'SlowDown',
  'Throttling',
  'ThrottlingException',
  'ThrottledException',
  'RequestThrottled',
  'RequestThrottledException',
  'TooManyRequestsException',
  'RequestLimitExceeded',
  'BandwidthLimitExceeded',
  'RequestTimeout',
  'RequestTimeoutException',
  'InternalError',
]);

/** Where signed PUTs go and how they are sent: what every request of one upload shares. */
export interface SignedPutTarget {
  credentials: TemporaryCredentials;
  region: string;
  /** S3 endpoint (MinIO: path-style); absent: `AWS_ENDPOINT_URL_S3`, else the region's. */
  endpoint?: string;
  bucket: string;
  key: string;
  /** The pool the requests go through. */
  dispatcher: Dispatcher;
  /** The end of the time each call has, its retries included (the activity attempt's). */
  deadline?: Deadline;
  signal?: AbortSignal;
  /** Default {@link DEFAULT_S3_MAX_ATTEMPTS}. */
  maxAttempts?: number;
  /** For tests: the jitter of the backoff. */
  random?: () => number;
}

export interface SignedPutOptions extends SignedPutTarget {
  body: Buffer;
  /** Default `application/octet-stream`. */
  contentType?: string;
  acl?: string;
  serverSideEncryption?: string;
  /** The body's checksum headers (`x-amz-checksum-crc32` or `content-md5`): the store verifies them. */
  checksumHeaders: Record<string, string>;
}

/** What the store answered: its ETag and the CRC32 it computed (when asked for one). */
export interface SignedPutResult {
  etag?: string;
  checksumCrc32?: string;
}

/** An S3 error answer in the shape of the SDK's errors (`Code`, `$metadata.httpStatusCode`), for `mapS3Error`. */
export class S3PutError extends Error {
  readonly Code: string | undefined;
  readonly $metadata: { httpStatusCode?: number; attempts: number };
  constructor(code: string | undefined, status: number | undefined, message: string, attempts: number, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = code ?? 'S3PutError';
    this.Code = code;
    this.$metadata = { httpStatusCode: status, attempts };
  }
}

/** A bucket's PutObject template, and the hash its signer uses. */
interface PutTemplate extends RequestTemplate {
  sha256: ConstructorParameters<typeof SignatureV4>[0]['sha256'];
}

/** The operations sent here: a PutObject, or an UploadPart (its `partNumber` and `uploadId` set per request). */
type PutOperation = 'PutObject' | 'UploadPart';

/** Clients that only build requests (never send one), by region and endpoint; their templates by bucket and operation. */
const builders = new Map<string, S3Client>();
const templates = new Map<string, Promise<PutTemplate | undefined>>();

function builderOf(region: string, endpoint: string | undefined): S3Client {
  const id = `${region}\n${endpoint ?? ''}`;
  let client = builders.get(id);
  if (!client) {
    // static placeholder keys: the middleware stops before anything is signed
    client = createS3Client({ region, endpoint, credentials: { AccessKeyId: 'unused', SecretAccessKey: 'unused', SessionToken: '', Expiration: '' } });
    builders.set(id, client);
  }
  return client;
}

function putCommand(operation: PutOperation, bucket: string, key: string): PutObjectCommand | UploadPartCommand {
  const body = Buffer.alloc(0);
  return operation === 'PutObject'
    ? new PutObjectCommand({ Bucket: bucket, Key: key, Body: body })
    : new UploadPartCommand({ Bucket: bucket, Key: key, Body: body, PartNumber: 1, UploadId: 'template' }); // both set per request
}

async function templateOf(
  operation: PutOperation,
  region: string,
  endpoint: string | undefined,
  bucket: string,
  key: string,
): Promise<PutTemplate | undefined> {
  const client = builderOf(region, endpoint);
  const template = await requestTemplateOf(client, bucket, key, putCommand(operation, bucket, key));
  return template && { ...template, sha256: client.config.sha256 };
}

/** The `operation` request of `key` as the SDK builds it (its template reused), and the hash the signer uses. */
async function requestOf(
  operation: PutOperation,
  region: string,
  endpoint: string | undefined,
  bucket: string,
  key: string,
): Promise<{ request: BuiltRequest; sha256: PutTemplate['sha256'] }> {
  const id = `${operation}\n${region}\n${endpoint ?? ''}\n${bucket}`;
  let template = templates.get(id);
  if (!template) {
    template = templateOf(operation, region, endpoint, bucket, key);
    templates.set(id, template);
    template.catch(() => templates.delete(id)); // tried again by the next key
  }
  const t = await template;
  if (!t) {
    const client = builderOf(region, endpoint);
    return { request: await builtRequest(client, bucket, key, putCommand(operation, bucket, key)), sha256: client.config.sha256 };
  }
  return { request: requestFromTemplate(t, key), sha256: t.sha256 };
}

/** `k=v&…` of a request's query, encoded as SigV4 canonicalizes it (a flag without value as `k=`). */
function queryString(query: Record<string, string>): string {
  return Object.entries(query)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v ?? '')}`)
    .join('&');
}

/**
 * Sends one signed PutObject of `body`; retries as the SDK client does, within the deadline. Throws {@link S3PutError}
 * for an answer other than 2xx (its S3 `Code` and status), undici's error for a failed connection, or the signal's
 * reason; the caller maps them (`mapS3Error`).
 */
export async function signedPutObject(options: SignedPutOptions): Promise<SignedPutResult> {
  const sender = await senderOf('PutObject', options);
  const headers: Record<string, string> = { 'content-type': options.contentType ?? 'application/octet-stream', ...options.checksumHeaders };
  if (options.acl) headers['x-amz-acl'] = options.acl;
  if (options.serverSideEncryption) headers['x-amz-server-side-encryption'] = options.serverSideEncryption;
  return sender({}, options.body, headers);
}

/** Sends one part of a multipart upload: its number, its bytes and their checksum headers (which the store verifies). */
export type SignedPartSender = (partNumber: number, body: Buffer, checksumHeaders: Record<string, string>) => Promise<SignedPutResult>;

/**
 * The UploadPart requests of `uploadId`, signed here and sent through the pool, each retried as the SDK client does,
 * within the deadline (see {@link signedPutObject}, which throws the same errors). One signer for the whole upload
 * (it keeps its derived signing key). Parts carry no encryption or ACL header: those are the upload's, set when it
 * was created.
 */
export async function signedPartSender(target: SignedPutTarget & { uploadId: string }): Promise<SignedPartSender> {
  const sender = await senderOf('UploadPart', target);
  const { uploadId } = target;
  return (partNumber, body, checksumHeaders) =>
    sender({ partNumber: String(partNumber), uploadId }, body, { 'content-type': 'application/octet-stream', ...checksumHeaders });
}

/** Sends `body` to `target`'s key as an `operation` (query values set per request), signed at each attempt. */
async function senderOf(
  operation: PutOperation,
  target: SignedPutTarget,
): Promise<(query: Record<string, string>, body: Buffer, headers: Record<string, string>) => Promise<SignedPutResult>> {
  const { credentials, region, bucket, key, signal } = target;
  const { request, sha256 } = await requestOf(operation, region, target.endpoint, bucket, key);
  const signer = new SignatureV4({
    service: 's3',
    region,
    credentials: { accessKeyId: credentials.AccessKeyId, secretAccessKey: credentials.SecretAccessKey, sessionToken: credentials.SessionToken },
    sha256,
    uriEscapePath: false,
    applyChecksum: false,
  });
  const host = hostOf(request);
  const origin = `${request.protocol}//${host}`;
  const maxAttempts = target.maxAttempts ?? DEFAULT_S3_MAX_ATTEMPTS;

  // a span for each request while tracing is on (`S3 UploadPart`), its retries inside, as the SDK client's calls have
  const spanAttributes = (values: Record<string, string>) => () =>
    s3SpanAttributes(operation, { Bucket: bucket, Key: key, PartNumber: values['partNumber'] === undefined ? undefined : Number(values['partNumber']) });
  return (values, body, extraHeaders) => withSpan(`S3 ${operation}`, spanAttributes(values), (span) => send(values, body, extraHeaders, span));

  async function send(values: Record<string, string>, body: Buffer, extraHeaders: Record<string, string>, span: SpanHandle): Promise<SignedPutResult> {
    const query = { ...request.query, ...values };
    const search = queryString(query);
    const path = search === '' ? request.path : `${request.path}?${search}`;
    const headers: Record<string, string> = {
      host,
      'content-length': String(body.length),
      // the body carries its own checksum, which the store verifies: it is not hashed into the signature (as the SDK
      // client's `unsignedChecksummedPayload` middleware sends it)
      'x-amz-content-sha256': 'UNSIGNED-PAYLOAD',
      ...extraHeaders,
    };
    const deadlineMs = target.deadline?.();
    for (let attempt = 1; ; attempt++) {
      signal?.throwIfAborted();
      // signed at each attempt: its date is the attempt's (a retry after minutes of backoff is not a stale signature)
      const signed = await signer.sign({
        method: 'PUT',
        protocol: request.protocol,
        hostname: request.hostname,
        port: request.port,
        path: request.path,
        query,
        headers: { ...headers },
      });
      const budgetMs = attemptBudgetMs(deadlineMs, Date.now());
      const timeoutMs = budgetMs === undefined ? PUT_TIMEOUT_MS : Math.max(1, Math.min(PUT_TIMEOUT_MS, budgetMs));
      let failure: unknown;
      let retryable: boolean;
      try {
        const res = await target.dispatcher.request({
          origin,
          path,
          method: 'PUT',
          headers: signed.headers,
          body,
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
          signal,
          // the signature holds for this endpoint only; the SDK follows no redirect either (its types omit the field)
          maxRedirections: 0,
        } as Dispatcher.RequestOptions);
        span.set({ 'http.response.status_code': res.statusCode, 'sapi.attempts': attempt });
        if (res.statusCode >= 200 && res.statusCode < 300) {
          await res.body.dump();
          return { etag: headerOf(res.headers, 'etag'), checksumCrc32: headerOf(res.headers, 'x-amz-checksum-crc32') };
        }
        const text = await res.body.text().catch(() => '');
        const code = s3ErrorCodeOf(text) ?? statusCode(res.statusCode);
        failure = new S3PutError(code, res.statusCode, text ? excerptOf(text) : `HTTP ${res.statusCode}`, attempt);
        retryable = res.statusCode >= 500 || res.statusCode === 429 || (code !== undefined && RETRYABLE_CODES.has(code));
      } catch (err) {
        if (signal?.aborted) throw signal.reason ?? err;
        failure = err;
        retryable = true; // no answer: a network error or a timeout, which the SDK retries too
      }
      const delayMs = backoffDelayMs(attempt, RETRY_BASE_MS, RETRY_MAX_MS, target.random);
      if (!retryable || attempt >= maxAttempts || !retryFits(deadlineMs, Date.now(), delayMs)) throw failure;
      await sleep(delayMs, undefined, signal ? { signal } : undefined).catch((err: unknown) => {
        throw signal?.reason ?? err;
      });
    }
  }
}

function headerOf(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The SDK's error name of an answer without an S3 error body (a HEAD-like empty answer). */
function statusCode(status: number): string | undefined {
  if (status === 403) return 'Forbidden';
  if (status === 404) return 'NotFound';
  if (status === 400) return 'BadRequest';
  return undefined;
}
