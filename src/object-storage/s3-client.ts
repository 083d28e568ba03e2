/**
 * S3 clients for object-storage transfers: from the service's temporary credentials, or from the default AWS
 * credentials chain (for `s3://` sources and destinations of the user). The endpoint comes from the option or
 * `AWS_ENDPOINT_URL_S3` (MinIO, path-style); against the real service it is unset and the region decides.
 * Also: the credentials-expiry check and the mapping of S3 errors to the error registry.
 */
import * as http from 'node:http';
import * as https from 'node:https';
import { GetObjectCommand, type PutObjectCommand, S3Client, type S3ClientConfig, type UploadPartCommand } from '@aws-sdk/client-s3';
import { SignatureV4 } from '@smithy/signature-v4';
import { type Deadline, retryFits } from '../http/deadline';
import { assertNotExpiring, whereOf } from './store-helpers';
import { tracingOn, withSpan } from '../observability/spans';
import { SapiCredentialsExpiredError, SapiError, SapiErrorCode, SapiInvalidInputError, SapiTransferError, errorMessage } from '../errors';

/** Temporary credentials as the service issues them (`uploadParams.credentials`, file detail `credentials`). */
export interface TemporaryCredentials {
  AccessKeyId: string;
  SecretAccessKey: string;
  SessionToken: string;
  /** ISO 8601 with offset. */
  Expiration: string;
}

/** Region used when neither the option, the file resource nor `AWS_REGION` names one. */
export const DEFAULT_REGION = 'us-east-1';
/** Credentials expiring within this margin are treated as expired: 5 min. */
export const DEFAULT_CREDENTIALS_MARGIN_MS = 5 * 60 * 1000;
/** Attempts the SDK makes per S3 call (its own retry of throttling/5xx/network). Default 4. */
export const DEFAULT_S3_MAX_ATTEMPTS = 4;
/** Sockets per S3 endpoint. Default 64 (parts × concurrent transfers). */
const DEFAULT_S3_MAX_SOCKETS = 64;

interface S3ClientOptions {
  /** Temporary credentials; absent = the default AWS credentials chain. */
  credentials?: TemporaryCredentials;
  /** Default: `AWS_REGION`, `AWS_DEFAULT_REGION`, then {@link DEFAULT_REGION}. */
  region?: string;
  /** Default: `AWS_ENDPOINT_URL_S3`, else the SDK's endpoint for the region. */
  endpoint?: string;
  /** Default: true when an endpoint is set (MinIO needs path-style). */
  forcePathStyle?: boolean;
  /** Default {@link DEFAULT_S3_MAX_ATTEMPTS}. */
  maxAttempts?: number;
  /** Default {@link DEFAULT_S3_MAX_SOCKETS}. */
  maxSockets?: number;
  /** Per-request socket idle timeout. Default 120 000 ms. */
  requestTimeoutMs?: number;
  /** The end of the time each call has, its retries included (the activity attempt's); default: none. */
  deadline?: Deadline;
}

/** The SDK's retry strategy (its token-based interface; an older one has `retry()` only). */
type SdkRetryStrategy = Awaited<ReturnType<S3Client['config']['retryStrategy']>>;
type SdkRetryStrategyV2 = Extract<SdkRetryStrategy, { refreshRetryTokenForRetry: unknown }>;

/**
 * The SDK's retry strategy, its retries bounded by `deadline`: a retry whose wait would not leave its attempt a
 * second before the deadline (see `retryFits`) is not made, and the call fails with its last error (the SDK throws
 * that when the strategy refuses). An older strategy without tokens is returned as it is.
 */
export function deadlineRetryStrategy(inner: SdkRetryStrategy, deadline: Deadline, now: () => number = Date.now): SdkRetryStrategy {
  if (!('refreshRetryTokenForRetry' in inner)) return inner;
  const v2 = inner as SdkRetryStrategyV2;
  return {
    acquireInitialRetryToken: (scope) => v2.acquireInitialRetryToken(scope),
    async refreshRetryTokenForRetry(token, errorInfo) {
      const next = await v2.refreshRetryTokenForRetry(token, errorInfo);
      if (!retryFits(deadline(), now(), next.getRetryDelay())) throw errorInfo.error;
      return next;
    },
    recordSuccess: (token) => v2.recordSuccess(token),
  } satisfies SdkRetryStrategyV2;
}

/** Creates an S3 client. Checksums: we send Content-MD5 ourselves, so the SDK computes them only when required. */
export function createS3Client(options: S3ClientOptions = {}): S3Client {
  const endpoint = options.endpoint ?? nonEmpty(process.env['AWS_ENDPOINT_URL_S3']);
  const region = options.region ?? nonEmpty(process.env['AWS_REGION']) ?? nonEmpty(process.env['AWS_DEFAULT_REGION']) ?? DEFAULT_REGION;
  const maxSockets = options.maxSockets ?? DEFAULT_S3_MAX_SOCKETS;
  const config: S3ClientConfig = {
    region,
    endpoint,
    forcePathStyle: options.forcePathStyle ?? endpoint !== undefined,
    maxAttempts: options.maxAttempts ?? DEFAULT_S3_MAX_ATTEMPTS,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    // no `Expect: 100-continue` before bodies of 2 MiB and more (the SDK's default): every part would wait one more
    // round trip for the store's go-ahead before its bytes move; a refused part costs its bytes once, and is rare
    expectContinueHeader: false,
    requestHandler: {
      connectionTimeout: 10_000,
      requestTimeout: options.requestTimeoutMs ?? 120_000,
      httpAgent: new http.Agent({ keepAlive: true, maxSockets }),
      httpsAgent: new https.Agent({ keepAlive: true, maxSockets }),
    },
  };
  if (options.credentials) {
    const c = options.credentials;
    config.credentials = {
      accessKeyId: c.AccessKeyId,
      secretAccessKey: c.SecretAccessKey,
      sessionToken: c.SessionToken,
      // No `expiration` here: the SDK would try to refresh a static identity; we check expiry ourselves.
    };
  }
  Object.assign(config, sharedEnvironmentSettings());
  const client = new S3Client(config);
  if (options.deadline) {
    // the retry middleware asks the resolved config for its strategy at each call
    const resolved = client.config as { retryStrategy: () => Promise<SdkRetryStrategy> };
    const base = resolved.retryStrategy;
    const deadline = options.deadline;
    resolved.retryStrategy = async () => deadlineRetryStrategy(await base(), deadline);
  }
  client.middlewareStack.add(
    (next) => async (args) => {
      unsignedChecksummedPayload(args.request as { headers?: Record<string, string>; body?: unknown });
      return next(args);
    },
    { step: 'build', name: 'sapiUnsignedChecksummedPayload' },
  );
  // a span for each S3 call while tracing is on (`S3 UploadPart`), the SDK's retries inside it
  client.middlewareStack.add(
    (next, context) => (args) => {
      if (!tracingOn()) return next(args);
      const operation = String(context.commandName ?? 'request').replace(/Command$/, '');
      return withSpan(`S3 ${operation}`, s3SpanAttributes(operation, args.input as object), async (span) => {
        try {
          const out = await next(args);
          const metadata = (out.output as { $metadata?: { httpStatusCode?: number; attempts?: number } } | undefined)?.$metadata;
          span.set({ 'http.response.status_code': metadata?.httpStatusCode, 'sapi.attempts': metadata?.attempts });
          return out;
        } catch (err) {
          span.set({ 'http.response.status_code': s3ErrorInfo(err).status });
          throw err;
        }
      });
    },
    { step: 'initialize', name: 'sapiTracing' },
  );
  return client;
}

/** The client settings the SDK reads from the environment and `~/.aws/config` when a client does not set them. */
const ENVIRONMENT_SETTINGS = [
  'defaultsMode',
  'authSchemePreference',
  'disableS3ExpressSessionAuth',
  'retryMode',
  'sigv4aSigningRegionSet',
  'useArnRegion',
  'useDualstackEndpoint',
  'useFipsEndpoint',
  'userAgentAppId',
] as const;

let environmentClient: S3Client | undefined;

/**
 * The settings of {@link ENVIRONMENT_SETTINGS} as providers of one client made for reading them, which the SDK
 * memoizes: each new client would otherwise look every one up again (environment variable, then the shared config
 * file, then its default), building an error with a stack trace at each step that finds nothing — about half of the
 * CPU and the allocations of a client used for one PutObject, as every small import's is (its credentials are its
 * own). They are read once per process, at the first call that needs them, as the SDK reads them once per client.
 */
function sharedEnvironmentSettings(): Partial<S3ClientConfig> {
  environmentClient ??= new S3Client({ region: DEFAULT_REGION });
  const resolved = environmentClient.config as unknown as Record<(typeof ENVIRONMENT_SETTINGS)[number], () => Promise<unknown>>;
  return Object.fromEntries(ENVIRONMENT_SETTINGS.map((name) => [name, () => resolved[name]()])) as Partial<S3ClientConfig>;
}

/** The signed-payload header of SigV4, and its value for a body that is not hashed into the signature. */
const CONTENT_SHA256 = 'x-amz-content-sha256';
const UNSIGNED_PAYLOAD = 'UNSIGNED-PAYLOAD';

/**
 * A body that carries its own checksum (`x-amz-checksum-crc32` or `Content-MD5`, which the store verifies) goes
 * with `x-amz-content-sha256: UNSIGNED-PAYLOAD` instead of its SHA-256 in the signature, as the AWS CLI sends over
 * HTTPS: the SDK would hash every part once more (the signer), and the store too, to check it; the integrity is the
 * checksum's, the request is signed all the same. Parts and single PUTs of an upload are such bodies.
 */
export function unsignedChecksummedPayload(request: { headers?: Record<string, string>; body?: unknown }): void {
  const headers = request.headers;
  if (headers && request.body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === CONTENT_SHA256)) {
    const checksummed = Object.keys(headers).some((h) => {
      const name = h.toLowerCase();
      return name === 'content-md5' || name.startsWith('x-amz-checksum-');
    });
    if (checksummed) headers[CONTENT_SHA256] = UNSIGNED_PAYLOAD;
  }
}

/** What a span of an S3 call says: the operation, bucket, key and part. Never the request's URL (a signed one carries credentials). */
export function s3SpanAttributes(operation: string, input: { Bucket?: unknown; Key?: unknown; PartNumber?: unknown }) {
  return {
    'rpc.system': 'aws-api',
    'rpc.service': 'S3',
    'rpc.method': operation,
    'aws.s3.bucket': typeof input.Bucket === 'string' ? input.Bucket : undefined,
    'aws.s3.key': typeof input.Key === 'string' ? input.Key : undefined,
    'aws.s3.part_number': typeof input.PartNumber === 'number' ? input.PartNumber : undefined,
  };
}

/** Milliseconds until the credentials expire (negative when expired); undefined when `Expiration` is unreadable. */
export function credentialsRemainingMs(credentials: TemporaryCredentials, nowMs: number = Date.now()): number | undefined {
  const at = parseExpiration(credentials.Expiration);
  return at === undefined ? undefined : at.getTime() - nowMs;
}

/** Throws `SAPI_CREDENTIALS_EXPIRED` (retryable) when the credentials expire within `marginMs`. */
export function assertCredentialsFresh(
  credentials: TemporaryCredentials | undefined,
  where: string,
  marginMs: number = DEFAULT_CREDENTIALS_MARGIN_MS,
  nowMs: number = Date.now(),
): void {
  assertNotExpiring(credentials?.Expiration, where, marginMs, nowMs);
}

/** S3 error names that mean the temporary credentials are no longer usable. */
const CREDENTIAL_ERRORS = new Set(['ExpiredToken', 'ExpiredTokenException', 'TokenRefreshRequired', 'InvalidToken', 'AccessDenied', 'InvalidAccessKeyId']);

/** The S3 error name (`NoSuchKey`, `ExpiredToken`, …) and HTTP status of an SDK error. */
export function s3ErrorInfo(err: unknown): { name?: string; status?: number } {
  if (typeof err !== 'object' || err === null) return {};
  const e = err as { name?: unknown; Code?: unknown; $metadata?: { httpStatusCode?: number } };
  const name = typeof e.Code === 'string' ? e.Code : typeof e.name === 'string' ? e.name : undefined;
  return { name, status: e.$metadata?.httpStatusCode };
}

/**
 * Maps an error from an S3 call to the registry: rejected/expired credentials → `SAPI_CREDENTIALS_EXPIRED`;
 * bad digest → `SAPI_CHECKSUM_MISMATCH`; missing key/bucket and other 4xx → non-retryable transfer error;
 * everything else (5xx, network) → retryable transfer error. Our own errors and aborts pass through.
 */
export function mapS3Error(err: unknown, op: 'upload' | 'download', context: Record<string, string | number | undefined>, signal?: AbortSignal): unknown {
  if (err instanceof SapiError) return err;
  if (signal?.aborted) return signal.reason ?? err;
  const { name, status } = s3ErrorInfo(err);
  const where = whereOf(op, context);
  if (name && CREDENTIAL_ERRORS.has(name)) return new SapiCredentialsExpiredError({ where, serviceCode: name, cause: err });
  const code = op === 'upload' ? SapiErrorCode.UPLOAD_FAILED : SapiErrorCode.DOWNLOAD_FAILED;
  if (name === 'BadDigest' || name === 'InvalidDigest' || name === 'XAmzContentSHA256Mismatch') {
    return new SapiTransferError({
      code: SapiErrorCode.CHECKSUM_MISMATCH,
      message: `${op} failed: the store rejected the checksum`,
      context,
      serviceCode: name,
      status,
      cause: err,
    });
  }
  const notRetryable = status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429;
  return new SapiTransferError({
    code,
    message: `${op} failed${name ? ` (${name}${status ? ` ${status}` : ''})` : ''}`,
    context,
    retryable: !notRetryable,
    serviceCode: name,
    status,
    cause: err,
  });
}

/** Longest validity of a SigV4 query-signed URL: 7 days. */
const MAX_PRESIGN_SECONDS = 7 * 24 * 3600;

/** A request as the client's middleware builds it (the part a presigned URL needs). */
export interface BuiltRequest {
  protocol: string;
  hostname: string;
  port?: number;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
}

/**
 * A bucket's request with the key left out, as one client's middleware builds it: the endpoint, the path before the
 * key (`/bucket/` path-style, `/` virtual-hosted) and the query; its keys' requests reuse it.
 */
export interface RequestTemplate {
  protocol: string;
  hostname: string;
  port?: number;
  host: string;
  pathBeforeKey: string;
  query: Record<string, string>;
}

/**
 * What every GetObject of one bucket through one client is presigned with: its template and one signer (it keeps the
 * derived signing key).
 */
interface PresignTemplate extends RequestTemplate {
  signer: SignatureV4;
}

/** Per client and bucket (a client's endpoint and style never change). `undefined`: presign each key through the stack. */
const presignTemplates = new WeakMap<S3Client, Map<string, Promise<PresignTemplate | undefined>>>();

/**
 * A query-signed (presigned) GET URL of an object, made by the client itself: its middleware builds the request
 * (endpoint, path or virtual-host style, region) and, instead of signing its headers and sending it, we sign its
 * query with the client's credentials (`X-Amz-Security-Token` included) and keep the URL. The payload is
 * `UNSIGNED-PAYLOAD`, as for every presigned S3 URL. Lets a plain HTTP client (the download thread) read it.
 *
 * The middleware runs once per client and bucket: the other keys of the bucket reuse the request it built, their key
 * encoded as the SDK encodes it (checked on the first key), and one signer (~2 ms of CPU per URL through the whole
 * stack, ~50 ms for a sliced file's 22, against ~0.1 ms this way).
 */
export async function presignGetObject(s3: S3Client, bucket: string, key: string, expiresInSeconds: number): Promise<string> {
  const expiresIn = Math.max(1, Math.min(MAX_PRESIGN_SECONDS, Math.floor(expiresInSeconds)));
  let byBucket = presignTemplates.get(s3);
  if (!byBucket) presignTemplates.set(s3, (byBucket = new Map()));
  let template = byBucket.get(bucket);
  if (!template) {
    template = presignTemplateOf(s3, bucket, key);
    byBucket.set(bucket, template);
    template.catch(() => byBucket.delete(bucket)); // tried again by the next key
  }
  const t = await template;
  if (!t) return signedUrl(await builtRequest(s3, bucket, key), await presignSigner(s3), expiresIn);
  return signedUrl(requestFromTemplate(t, key), t.signer, expiresIn);
}

/**
 * The template of `key`'s bucket, from the request the middleware builds for `key` (a GetObject, or `command`);
 * `undefined` when its path does not end with the key as {@link encodeS3Key} encodes it.
 */
export async function requestTemplateOf(
  s3: S3Client,
  bucket: string,
  key: string,
  command?: GetObjectCommand | PutObjectCommand | UploadPartCommand,
): Promise<RequestTemplate | undefined> {
  const request = await builtRequest(s3, bucket, key, command);
  const encoded = encodeS3Key(key);
  if (!request.path.endsWith(encoded)) return undefined;
  return {
    protocol: request.protocol,
    hostname: request.hostname,
    port: request.port,
    host: hostOf(request),
    pathBeforeKey: request.path.slice(0, request.path.length - encoded.length),
    query: { ...request.query },
  };
}

/** `key`'s request from its bucket's template. */
export function requestFromTemplate(t: RequestTemplate, key: string): BuiltRequest {
  return { protocol: t.protocol, hostname: t.hostname, port: t.port, path: `${t.pathBeforeKey}${encodeS3Key(key)}`, query: t.query, headers: { host: t.host } };
}

async function presignTemplateOf(s3: S3Client, bucket: string, key: string): Promise<PresignTemplate | undefined> {
  const template = await requestTemplateOf(s3, bucket, key);
  return template && { ...template, signer: await presignSigner(s3) };
}

async function presignSigner(s3: S3Client): Promise<SignatureV4> {
  return new SignatureV4({
    service: 's3',
    region: await s3.config.region(),
    credentials: s3.config.credentials,
    sha256: s3.config.sha256,
    uriEscapePath: false,
    applyChecksum: false,
  });
}

/**
 * The GetObject request of `key` (or `command`'s) as the client's middleware builds it, stopped before it is signed
 * and sent.
 */
export async function builtRequest(
  s3: S3Client,
  bucket: string,
  key: string,
  command: GetObjectCommand | PutObjectCommand | UploadPartCommand = new GetObjectCommand({ Bucket: bucket, Key: key }),
): Promise<BuiltRequest> {
  // the commands differ in input and output types only: the stack is run for the request it builds
  const stack = s3.middlewareStack.concat((command as GetObjectCommand).middlewareStack);
  let built: BuiltRequest | undefined;
  stack.addRelativeTo(
    () => async (args: { request: unknown }) => {
      built = args.request as BuiltRequest;
      return { response: {}, output: { $metadata: {} } };
    },
    { name: 'sapiPresignGetObject', relation: 'before', toMiddleware: 'awsAuthMiddleware', override: true },
  );
  await command.resolveMiddleware(stack as never, s3.config, {})({ input: command.input } as never);
  if (!built)
    throw new SapiTransferError({
      code: command instanceof GetObjectCommand ? SapiErrorCode.DOWNLOAD_FAILED : SapiErrorCode.UPLOAD_FAILED,
      message: `could not build the ${command instanceof GetObjectCommand ? 'slice URL' : 'upload request'}`,
      context: { bucket, key },
      retryable: false,
    });
  return built;
}

export function hostOf(request: BuiltRequest): string {
  return request.headers['host'] ?? `${request.hostname}${request.port ? `:${request.port}` : ''}`;
}

async function signedUrl(request: BuiltRequest, signer: SignatureV4, expiresIn: number): Promise<string> {
  const host = hostOf(request);
  const signed = await signer.presign(
    {
      method: 'GET',
      protocol: request.protocol,
      hostname: request.hostname,
      port: request.port,
      path: request.path,
      query: { ...request.query },
      headers: { host, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' },
    },
    { expiresIn, unhoistableHeaders: new Set(['x-amz-content-sha256']), unsignableHeaders: new Set(['x-amz-content-sha256']) },
  );
  const query = Object.entries(signed.query ?? {})
    .flatMap(([k, v]) => (Array.isArray(v) ? v : [v]).map((one) => `${encodeURIComponent(k)}=${encodeURIComponent(String(one ?? ''))}`))
    .join('&');
  return `${request.protocol}//${host}${request.path}?${query}`;
}

/** An object key in a request path as the SDK writes it (a greedy label): each `/`-separated part URI-encoded, `!'()*` too. */
export function encodeS3Key(key: string): string {
  return key
    .split('/')
    .map((part) => encodeURIComponent(part).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`))
    .join('/');
}

/** The `<Code>` of an S3 XML error answer. */
export function s3ErrorCodeOf(body: string): string | undefined {
  return /<Code>([^<]+)<\/Code>/.exec(body)?.[1];
}

/** Splits `s3://bucket/key` into its parts. */
export function parseS3Uri(uri: string): { bucket: string; key: string } {
  const m = /^s3:\/\/([^/]+)\/(.+)$/.exec(uri);
  if (!m) throw new SapiInvalidInputError(`expected s3://<bucket>/<key>, got ${JSON.stringify(uri)}`);
  return { bucket: m[1] as string, key: m[2] as string };
}

/** Throws the signal's reason when aborted (the activity's CancelledFailure passes through unchanged). */
export function throwIfAborted(signal?: AbortSignal): void {
  if (signal?.aborted) throw signal.reason ?? new Error('aborted');
}

function parseExpiration(value: string): Date | undefined {
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : new Date(ms);
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v === '' ? undefined : v;
}

/** For messages. */
export function describeError(err: unknown): string {
  const { name } = s3ErrorInfo(err);
  return name ? `${name}: ${errorMessage(err)}` : errorMessage(err);
}
