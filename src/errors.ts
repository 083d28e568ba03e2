/**
 * The error registry: every failure this package raises is a {@link SapiError} with a stable machine-readable
 * `code` (`SAPI_…`), so activities, workflows and users can branch on it, and one function
 * ({@link toApplicationFailure}) turns any error into Temporal's `ApplicationFailure` (type = code).
 *
 * Messages say where the failure happened, what was received and, when we know, how to fix it.
 */
import { ApplicationFailure } from '@temporalio/common';
import { describeJobFailure, ErrorCode, ERROR_CODES, NON_RETRYABLE_ERROR_CODES } from './contracts/error-codes';

/** Every code this package raises (the registry, `src/contracts/error-codes.ts`). */
export const SapiErrorCode = ErrorCode;
export type SapiErrorCode = ErrorCode;

/** All codes, for filters and docs. */
export const SAPI_ERROR_CODES: readonly SapiErrorCode[] = Object.freeze(Object.keys(ERROR_CODES) as SapiErrorCode[]);

export { NON_RETRYABLE_ERROR_CODES };

/**
 * The brand that makes `instanceof` work across copies of this package (two versions in one process, a bundle and
 * its host): every error carries the names of its classes under one global symbol, as undici does.
 */
const BRAND = Symbol.for('sapi-temporal.error');

/** JSON-serialisable extra data carried by an error (and into the failure's details). */
export type SapiErrorDetails = Record<string, unknown>;

export interface SapiErrorOptions {
  code: SapiErrorCode;
  message: string;
  retryable: boolean;
  /** HTTP status received, when the failure came from an HTTP response. */
  status?: number;
  /** The service's own dotted code (`storage.buckets.notFound`) or numeric code as a string. */
  serviceCode?: string;
  /** The service's `exceptionId`: quote it to the service's support. */
  exceptionId?: string;
  /** How long the service asked us to wait (`Retry-After`), in milliseconds. */
  retryAfterMs?: number;
  /**
   * True when a non-idempotent request failed in a way that may have reached the service (lost response, 5xx,
   * timeout after sending): the caller must look up what was created instead of replaying the request.
   */
  mayHaveReachedService?: boolean;
  details?: SapiErrorDetails;
  cause?: unknown;
}

/** Base of every error this package raises. `instanceof` holds across copies of the package (see BRAND). */
export class SapiError extends Error {
  static override [Symbol.hasInstance](value: unknown): boolean {
    const brands = typeof value === 'object' && value !== null ? (value as { [BRAND]?: readonly string[] })[BRAND] : undefined;
    return Array.isArray(brands) ? brands.includes(this.name) : Function.prototype[Symbol.hasInstance].call(this, value);
  }

  readonly code: SapiErrorCode;
  readonly retryable: boolean;
  readonly status?: number;
  readonly serviceCode?: string;
  readonly exceptionId?: string;
  readonly retryAfterMs?: number;
  readonly mayHaveReachedService: boolean;
  readonly details?: SapiErrorDetails;

  constructor(options: SapiErrorOptions) {
    super(options.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    const brands: string[] = [];
    for (let c: unknown = new.target; typeof c === 'function' && c !== Error; c = Object.getPrototypeOf(c)) brands.push((c as { name: string }).name);
    Object.defineProperty(this, BRAND, { value: Object.freeze(brands) });
    this.code = options.code;
    this.retryable = options.retryable;
    this.status = options.status;
    this.serviceCode = options.serviceCode;
    this.exceptionId = options.exceptionId;
    this.retryAfterMs = options.retryAfterMs;
    this.mayHaveReachedService = options.mayHaveReachedService ?? false;
    this.details = options.details;
  }

  /** A plain JSON view (no stack, no cause), safe for logs and failure details. */
  toJSON(): SapiErrorDetails {
    return compact({
      name: this.name,
      code: this.code,
      message: this.message,
      retryable: this.retryable,
      status: this.status,
      serviceCode: this.serviceCode,
      exceptionId: this.exceptionId,
      retryAfterMs: this.retryAfterMs,
      mayHaveReachedService: this.mayHaveReachedService || undefined,
      details: this.details,
    });
  }
}

/** What we know about the HTTP exchange that failed. */
export interface RequestDescription {
  /** `GET`, `POST`, … */
  method: string;
  /** Path (and query) as sent, without the origin, e.g. `/v2/storage/buckets/in.c-x/tables-async`. */
  path: string;
}

function describe(req: RequestDescription): string {
  return `${req.method} ${req.path}`;
}

/** The service answered with a non-2xx status. The code depends on the status (see {@link httpErrorCode}). */
export class SapiHttpError extends SapiError {
  readonly method: string;
  readonly path: string;

  constructor(options: {
    request: RequestDescription;
    status: number;
    serviceCode?: string;
    serviceMessage?: string;
    exceptionId?: string;
    retryAfterMs?: number;
    /** First characters of a body we could not parse, for the message. */
    bodyExcerpt?: string;
    mayHaveReachedService?: boolean;
    details?: SapiErrorDetails;
  }) {
    const code = httpErrorCode(options.status, options.serviceCode);
    const parts = [`${describe(options.request)} failed: ${options.status}`];
    if (options.serviceCode !== undefined) parts.push(options.serviceCode);
    if (options.serviceMessage !== undefined) parts.push(JSON.stringify(options.serviceMessage));
    else if (options.bodyExcerpt) parts.push(`body: ${JSON.stringify(options.bodyExcerpt)}`);
    if (options.exceptionId !== undefined) parts.push(`[exceptionId=${options.exceptionId}]`);
    const hint = httpErrorHint(code, options.retryAfterMs);
    super({
      code,
      message: parts.join(' ') + (hint ? ` (${hint})` : ''),
      retryable: isRetryableStatus(options.status),
      status: options.status,
      serviceCode: options.serviceCode,
      exceptionId: options.exceptionId,
      retryAfterMs: options.retryAfterMs,
      mayHaveReachedService: options.mayHaveReachedService,
      details: compact({ method: options.request.method, path: options.request.path, ...options.details }),
    });
    this.method = options.request.method;
    this.path = options.request.path;
  }
}

/** Maps an HTTP status (and the service's code) to one of our codes. */
export function httpErrorCode(status: number, serviceCode?: string): SapiErrorCode {
  if (status === 401 || status === 403) return SapiErrorCode.UNAUTHORIZED;
  if (status === 404) return SapiErrorCode.NOT_FOUND;
  if (status === 409 || (status === 400 && serviceCode !== undefined && /alreadyExists$/i.test(serviceCode))) {
    return SapiErrorCode.ALREADY_EXISTS;
  }
  if (status === 400 || status === 422) return SapiErrorCode.VALIDATION;
  if (status === 408) return SapiErrorCode.TIMEOUT;
  if (status === 429) return SapiErrorCode.RATE_LIMITED;
  if (status === 503) return SapiErrorCode.MAINTENANCE;
  if (status >= 500) return SapiErrorCode.SERVER_ERROR;
  return SapiErrorCode.CLIENT_ERROR;
}

/** Statuses worth retrying: 408, 429 and 5xx except 501 (Not Implemented never changes). */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || (status >= 500 && status !== 501);
}

function httpErrorHint(code: SapiErrorCode, retryAfterMs?: number): string | undefined {
  switch (code) {
    case SapiErrorCode.UNAUTHORIZED:
      return 'check the Storage token of the connection and its permissions';
    case SapiErrorCode.RATE_LIMITED:
    case SapiErrorCode.MAINTENANCE:
      return retryAfterMs !== undefined ? `retry after ${Math.ceil(retryAfterMs / 1000)} s` : 'retry later';
    default:
      return undefined;
  }
}

/** The request never got an HTTP answer: refused, reset, DNS, TLS, socket closed. */
export class SapiNetworkError extends SapiError {
  constructor(options: { request: RequestDescription; cause: unknown; mayHaveReachedService: boolean; retryable?: boolean; url?: string }) {
    const causeCode = errorCode(options.cause);
    super({
      code: SapiErrorCode.NETWORK,
      message:
        `${describe(options.request)} failed: network error` +
        `${causeCode ? ` ${causeCode}` : ''}: ${errorMessage(options.cause)}` +
        (options.url ? ` (is ${options.url} reachable?)` : ''),
      retryable: options.retryable ?? true,
      mayHaveReachedService: options.mayHaveReachedService,
      details: compact({ method: options.request.method, path: options.request.path, causeCode }),
      cause: options.cause,
    });
  }
}

/** Connect, headers or body timeout. */
export class SapiTimeoutError extends SapiError {
  constructor(options: {
    request: RequestDescription;
    phase: 'connect' | 'headers' | 'body';
    timeoutMs?: number;
    cause?: unknown;
    mayHaveReachedService: boolean;
  }) {
    super({
      code: SapiErrorCode.TIMEOUT,
      message:
        `${describe(options.request)} failed: ${options.phase} timeout` +
        `${options.timeoutMs !== undefined ? ` after ${options.timeoutMs} ms` : ''}` +
        ` (raise timeouts.${options.phase}Ms if the service is slow)`,
      retryable: true,
      mayHaveReachedService: options.mayHaveReachedService,
      details: compact({ method: options.request.method, path: options.request.path, phase: options.phase, timeoutMs: options.timeoutMs }),
      cause: options.cause,
    });
  }
}

/** Maximum characters of an unexpected body quoted in messages. */
export const BODY_EXCERPT_CHARS = 200;

/** The response was not what the contract says: HTML instead of JSON, schema mismatch, unexpected status. */
export class SapiInvalidResponseError extends SapiError {
  constructor(options: {
    request: RequestDescription;
    status?: number;
    /** What is wrong, e.g. `expected JSON, got text/html` or a zod issue summary. */
    problem: string;
    body?: string;
    retryable?: boolean;
    mayHaveReachedService?: boolean;
    cause?: unknown;
  }) {
    const excerpt = options.body === undefined ? undefined : excerptOf(options.body);
    super({
      code: SapiErrorCode.INVALID_RESPONSE,
      message:
        `${describe(options.request)} returned an invalid response` +
        `${options.status !== undefined ? ` (${options.status})` : ''}: ${options.problem}` +
        `${excerpt !== undefined ? `; body starts with ${JSON.stringify(excerpt)}` : ''}`,
      // A schema mismatch on a 2xx is a contract problem: retrying gives the same answer. HTML from a proxy is
      // usually transient, so callers pass retryable=true for that case.
      retryable: options.retryable ?? false,
      status: options.status,
      mayHaveReachedService: options.mayHaveReachedService,
      details: compact({ method: options.request.method, path: options.request.path, bodyExcerpt: excerpt }),
      cause: options.cause,
    });
  }
}

/** Identifies a Storage job in messages. */
export interface JobReference {
  id: number | string;
  operationName?: string;
  url?: string;
}

/** A Storage job ended with status `error`. Not retryable: the same input fails the same way. */
export class SapiJobFailedError extends SapiError {
  readonly jobId: number | string;

  constructor(options: { job: JobReference & { tableId?: string | null }; message: string; serviceCode?: string; exceptionId?: string; retryable?: boolean }) {
    super({
      code: SapiErrorCode.JOB_FAILED,
      message: describeJobFailure({ ...options.job, message: options.message, code: options.serviceCode, exceptionId: options.exceptionId }),
      retryable: options.retryable ?? false,
      serviceCode: options.serviceCode,
      exceptionId: options.exceptionId,
      details: compact({ jobId: options.job.id, operationName: options.job.operationName, jobMessage: options.message }),
    });
    this.jobId = options.job.id;
  }
}

/** The job was still running when the caller's deadline passed. The job itself may still finish. */
export class SapiJobDeadlineError extends SapiError {
  constructor(options: { job: JobReference; deadlineMs: number; lastStatus?: string }) {
    super({
      code: SapiErrorCode.JOB_DEADLINE,
      message:
        `Storage job ${options.job.id}${options.job.operationName ? ` (${options.job.operationName})` : ''} did not finish ` +
        `within ${Math.round(options.deadlineMs / 1000)} s (last status: ${options.lastStatus ?? 'unknown'}); ` +
        `it may still finish: check GET /v2/storage/jobs/${options.job.id} or raise the job deadline`,
      retryable: false,
      details: compact({ jobId: options.job.id, operationName: options.job.operationName, deadlineMs: options.deadlineMs, lastStatus: options.lastStatus }),
    });
  }
}

/** Temporary object-storage credentials expired or are about to. Retryable: the activity prepares the file again. */
export class SapiCredentialsExpiredError extends SapiError {
  constructor(options: { where: string; expiration?: string; cause?: unknown; serviceCode?: string }) {
    super({
      code: SapiErrorCode.CREDENTIALS_EXPIRED,
      message:
        `${options.where}: temporary credentials ` +
        `${options.expiration ? `(expiring ${options.expiration}) ` : ''}are expired or rejected` +
        `${options.serviceCode ? ` (${options.serviceCode})` : ''}; request the file again to get fresh credentials`,
      retryable: true,
      serviceCode: options.serviceCode,
      details: compact({ where: options.where, expiration: options.expiration }),
      cause: options.cause,
    });
  }
}

/** Upload, download or checksum failure while moving bytes to/from object storage. */
export class SapiTransferError extends SapiError {
  constructor(options: {
    code: typeof SapiErrorCode.UPLOAD_FAILED | typeof SapiErrorCode.DOWNLOAD_FAILED | typeof SapiErrorCode.CHECKSUM_MISMATCH;
    message: string;
    /** Where: bucket, key, part or slice number… rendered as `[k=v, …]` in the message. */
    context?: Record<string, string | number | undefined>;
    retryable?: boolean;
    serviceCode?: string;
    status?: number;
    cause?: unknown;
  }) {
    const ctx = options.context ? Object.entries(options.context).filter(([, v]) => v !== undefined) : [];
    super({
      code: options.code,
      message:
        options.message +
        (ctx.length ? ` [${ctx.map(([k, v]) => `${k}=${v}`).join(', ')}]` : '') +
        (options.cause !== undefined ? `: ${errorMessage(options.cause)}` : ''),
      retryable: options.retryable ?? true,
      serviceCode: options.serviceCode,
      status: options.status,
      details: ctx.length ? Object.fromEntries(ctx) : undefined,
      cause: options.cause,
    });
  }
}

/** The caller passed something unusable. Never retried. */
export class SapiInvalidInputError extends SapiError {
  constructor(message: string, details?: SapiErrorDetails) {
    super({ code: SapiErrorCode.INVALID_INPUT, message, retryable: false, details });
  }
}

/**
 * An input names something the worker's input policy does not allow (a local path outside its roots, a URL or
 * address it refuses, an object outside its prefixes, a secret sent to a host it is not bound to). Never retried.
 * The message names the input field and the rule, never what the path or URL holds.
 */
export class SapiInputForbiddenError extends SapiError {
  constructor(field: string, rule: string, details?: SapiErrorDetails) {
    super({ code: SapiErrorCode.INPUT_FORBIDDEN, message: `${field}: ${rule}`, retryable: false, details: { field, ...details } });
  }
}

/**
 * A feature needs an optional peer dependency that is not installed (`SAPI_MISSING_DEPENDENCY`). Never retried: the
 * package is missing until the worker is redeployed with it. The message names the feature and the install command.
 */
export class SapiMissingDependencyError extends SapiError {
  constructor(feature: string, packages: readonly string[], cause: unknown) {
    super({
      code: SapiErrorCode.MISSING_DEPENDENCY,
      message: `${feature} needs ${packages.map((p) => p.replace(/@[^@/]+$/, '')).join(', ')}, not installed: npm install ${packages.join(' ')}`,
      retryable: false,
      details: { packages: [...packages] },
      cause,
    });
  }
}

/** True for any error raised by this package. */
export function isSapiError(err: unknown): err is SapiError {
  return err instanceof SapiError;
}

/**
 * Turns any error into a Temporal `ApplicationFailure`:
 * `type` = our code, `nonRetryable` = !retryable, details = `[{code, status, serviceCode, exceptionId, …}]`,
 * and `nextRetryDelay` = `Retry-After` when the service asked us to wait.
 * An `ApplicationFailure` passes through unchanged; an unknown error becomes a retryable failure typed by its name.
 */
export function toApplicationFailure(err: unknown): ApplicationFailure {
  if (err instanceof ApplicationFailure) return err;
  if (err instanceof SapiError) {
    return ApplicationFailure.create({
      type: err.code,
      message: err.message,
      nonRetryable: !err.retryable,
      details: [
        compact({
          code: err.code,
          status: err.status,
          serviceCode: err.serviceCode,
          exceptionId: err.exceptionId,
          retryAfterMs: err.retryAfterMs,
          mayHaveReachedService: err.mayHaveReachedService || undefined,
          ...err.details,
        }),
      ],
      nextRetryDelay: err.retryAfterMs !== undefined ? err.retryAfterMs : undefined,
      cause: err.cause instanceof Error ? err.cause : undefined,
    });
  }
  if (err instanceof Error) {
    return ApplicationFailure.create({ type: err.name || 'Error', message: err.message, nonRetryable: false, cause: err });
  }
  return ApplicationFailure.create({ type: 'Error', message: String(err), nonRetryable: false });
}

/** The value of `call`, or undefined when it fails with `SAPI_NOT_FOUND` (a 404: the thing is not there). */
export async function unlessNotFound<T>(call: () => Promise<T>): Promise<T | undefined> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof SapiError && err.code === SapiErrorCode.NOT_FOUND) return undefined;
    throw err;
  }
}

/** `err.code` when it is a string (Node system errors, undici errors, AWS SDK `name`s are handled by callers). */
export function errorCode(err: unknown): string | undefined {
  if (typeof err === 'object' && err !== null && 'code' in err && typeof (err as { code: unknown }).code === 'string') {
    return (err as { code: string }).code;
  }
  return undefined;
}

/** A message for anything thrown. */
export function errorMessage(err: unknown): string {
  if (err instanceof AggregateError && err.errors.length > 0) {
    return err.errors.map((e) => errorMessage(e)).join('; ');
  }
  if (err instanceof Error) return err.message || err.name;
  return String(err);
}

/** First {@link BODY_EXCERPT_CHARS} characters of a body, whitespace collapsed. */
export function excerptOf(body: string): string {
  const flat = body.replace(/\s+/g, ' ').trim();
  return flat.length > BODY_EXCERPT_CHARS ? `${flat.slice(0, BODY_EXCERPT_CHARS)}…` : flat;
}

function compact<T extends Record<string, unknown>>(obj: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) if (v !== undefined) out[k] = v;
  return out as T;
}
