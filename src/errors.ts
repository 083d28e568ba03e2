/**
 * The error registry: every code this package raises ({@link SapiErrorCode}, with whether retrying can help and what
 * it means in {@link ERROR_CODES}), the {@link SapiError} classes that carry them, and the one function that turns
 * any error into Temporal's `ApplicationFailure` (type = code: {@link toApplicationFailure}).
 *
 * Codes are stable: they are the `type` of Temporal failures (workflows and users branch on them) and the codes the
 * CLI prints. One naming scheme: `SAPI_<AREA>_<WHAT>`, the Storage API ones without an area. Messages say where the
 * failure happened, what was received and, when we know, how to fix it. Pure and sandbox-safe: workflows,
 * activities, the CLI and docs/errors.md (generated, checked by a unit test) read it.
 */
import { ApplicationFailure } from '@temporalio/common';

export const SapiErrorCode = {
  // Storage API and object storage
  UNAUTHORIZED: 'SAPI_UNAUTHORIZED',
  NOT_FOUND: 'SAPI_NOT_FOUND',
  ALREADY_EXISTS: 'SAPI_ALREADY_EXISTS',
  VALIDATION: 'SAPI_VALIDATION',
  CLIENT_ERROR: 'SAPI_CLIENT_ERROR',
  RATE_LIMITED: 'SAPI_RATE_LIMITED',
  MAINTENANCE: 'SAPI_MAINTENANCE',
  SERVER_ERROR: 'SAPI_SERVER_ERROR',
  NETWORK: 'SAPI_NETWORK',
  TIMEOUT: 'SAPI_TIMEOUT',
  INVALID_RESPONSE: 'SAPI_INVALID_RESPONSE',
  JOB_FAILED: 'SAPI_JOB_FAILED',
  JOB_DEADLINE: 'SAPI_JOB_DEADLINE',
  CREDENTIALS_EXPIRED: 'SAPI_CREDENTIALS_EXPIRED',
  UPLOAD_FAILED: 'SAPI_UPLOAD_FAILED',
  DOWNLOAD_FAILED: 'SAPI_DOWNLOAD_FAILED',
  CHECKSUM_MISMATCH: 'SAPI_CHECKSUM_MISMATCH',
  // any part
  INVALID_INPUT: 'SAPI_INVALID_INPUT',
  INPUT_FORBIDDEN: 'SAPI_INPUT_FORBIDDEN',
  CANCELLED: 'SAPI_CANCELLED',
  // starting a worker, reaching Temporal
  WORKER_CONFIG: 'SAPI_WORKER_CONFIG',
  TEMPORAL_NAMESPACE_NOT_FOUND: 'SAPI_TEMPORAL_NAMESPACE_NOT_FOUND',
  // extraction
  EXTRACT_CONFIG_INVALID: 'SAPI_EXTRACT_CONFIG_INVALID',
  EXTRACT_DATA_INVALID: 'SAPI_EXTRACT_DATA_INVALID',
  EXTRACT_PLACEHOLDER_MISSING: 'SAPI_EXTRACT_PLACEHOLDER_MISSING',
  EXTRACT_HTTP_STATUS: 'SAPI_EXTRACT_HTTP_STATUS',
  EXTRACT_NOT_JSON: 'SAPI_EXTRACT_NOT_JSON',
  EXTRACT_RATE_LIMITED: 'SAPI_EXTRACT_RATE_LIMITED',
  EXTRACT_NETWORK: 'SAPI_EXTRACT_NETWORK',
  // backfills
  BACKFILL_WINDOW_FAILED: 'SAPI_BACKFILL_WINDOW_FAILED',
  // the worker's optional packages
  MISSING_DEPENDENCY: 'SAPI_MISSING_DEPENDENCY',
  // the command line
  CLI_SCHEDULE_EXISTS: 'SAPI_CLI_SCHEDULE_EXISTS',
  CLI_SCHEDULE_NOT_FOUND: 'SAPI_CLI_SCHEDULE_NOT_FOUND',
  CLI_WORKFLOW_NOT_FOUND: 'SAPI_CLI_WORKFLOW_NOT_FOUND',
  CLI_TEMPORAL_UNREACHABLE: 'SAPI_CLI_TEMPORAL_UNREACHABLE',
  CLI_TEMPORAL_LOST_CONTACT: 'SAPI_CLI_TEMPORAL_LOST_CONTACT',
  CLI_INTERRUPTED: 'SAPI_CLI_INTERRUPTED',
  CLI_NO_WORKER: 'SAPI_CLI_NO_WORKER',
  CLI_REPLAY_FAILED: 'SAPI_CLI_REPLAY_FAILED',
  CLI_VERIFY_FAILED: 'SAPI_CLI_VERIFY_FAILED',
  CLI_UPDATE_REFUSED: 'SAPI_CLI_UPDATE_REFUSED',
} as const;

export type SapiErrorCode = (typeof SapiErrorCode)[keyof typeof SapiErrorCode];

/** What the registry says of a code. */
export interface ErrorCodeInfo {
  /** False: never retried. True: retried unless the error itself says it is not worth it (e.g. a 501, a 4xx). */
  retryable: boolean;
  /** What it means and what to do, for the README's table. */
  meaning: string;
}

/** Every code with its meaning. docs/errors.md's table is this, rendered (a unit test compares them). */
export const ERROR_CODES: Readonly<Record<SapiErrorCode, ErrorCodeInfo>> = Object.freeze({
  SAPI_UNAUTHORIZED: { retryable: false, meaning: '401/403 from the service: the token is missing, invalid, expired or lacks a permission' },
  SAPI_NOT_FOUND: { retryable: false, meaning: '404 from the service (bucket, table, file or job), or a target the import checks did not find' },
  SAPI_ALREADY_EXISTS: { retryable: false, meaning: '409, or 400 with a service code ending in `alreadyExists` (e.g. mode create into an existing table)' },
  SAPI_VALIDATION: { retryable: false, meaning: '400/422: the service rejected the parameters' },
  SAPI_CLIENT_ERROR: { retryable: false, meaning: 'any other 4xx' },
  SAPI_RATE_LIMITED: { retryable: true, meaning: '429: retried after `Retry-After`' },
  SAPI_MAINTENANCE: { retryable: true, meaning: '503 (maintenance or overloaded): retried after `Retry-After`' },
  SAPI_SERVER_ERROR: { retryable: true, meaning: '5xx other than 503 (501 is not retried)' },
  SAPI_NETWORK: { retryable: true, meaning: 'connection refused or reset, DNS failure, socket closed' },
  SAPI_TIMEOUT: { retryable: true, meaning: 'connect, headers or body timeout, or HTTP 408' },
  SAPI_INVALID_RESPONSE: {
    retryable: true,
    meaning: 'the response did not match what we expect (schema, unknown job status: not retried; an HTML page instead of JSON: retried)',
  },
  SAPI_JOB_FAILED: { retryable: false, meaning: "a Storage job ended in `error`; carries the job's message, code and exceptionId" },
  SAPI_JOB_DEADLINE: { retryable: false, meaning: 'a Storage job did not end within `polling.deadlineMs`; it may still finish on the service' },
  SAPI_CREDENTIALS_EXPIRED: {
    retryable: true,
    meaning: 'temporary object-storage credentials expired: an upload prepares a fresh file, a download fetches new ones',
  },
  SAPI_UPLOAD_FAILED: { retryable: true, meaning: 'an object-storage upload failed (bucket, key and part in the message)' },
  SAPI_DOWNLOAD_FAILED: { retryable: true, meaning: 'an object-storage download or a source read failed' },
  SAPI_CHECKSUM_MISMATCH: { retryable: true, meaning: 'bytes stored or received differ from what was sent or expected (size, MD5, ETag)' },
  SAPI_INVALID_INPUT: { retryable: false, meaning: 'the input cannot work (bad ids, unreadable or empty source, invalid header names, bad options)' },
  SAPI_INPUT_FORBIDDEN: {
    retryable: false,
    meaning:
      "an input names a path, URL, object or secret destination the worker's input policy does not allow, or another run's state (its staging, file, table or bucket) (the field and the rule in the message; see Security)",
  },
  SAPI_CANCELLED: { retryable: false, meaning: 'the run was cancelled (`cancel` update or workflow cancellation)' },
  SAPI_WORKER_CONFIG: {
    retryable: false,
    meaning:
      "the worker did not start: a setting it checks at start is missing or wrong (no Storage connection, a Storage URL it cannot reach, a rejected token), or its own activities have names of the plugin's; the setting or the names are in the message",
  },
  SAPI_TEMPORAL_NAMESPACE_NOT_FOUND: {
    retryable: false,
    meaning: 'the Temporal namespace does not exist on that server (worker start and every CLI command): check `TEMPORAL_NAMESPACE` / `--namespace`',
  },
  SAPI_EXTRACT_CONFIG_INVALID: { retryable: false, meaning: 'the extractor configuration is invalid; every issue listed with its path, before any request' },
  SAPI_EXTRACT_DATA_INVALID: { retryable: false, meaning: 'a response cannot be turned into records (e.g. two root arrays and no `dataField`)' },
  SAPI_EXTRACT_PLACEHOLDER_MISSING: { retryable: false, meaning: "a child job's placeholder has no value in its parent row" },
  SAPI_EXTRACT_HTTP_STATUS: { retryable: true, meaning: 'the extracted API answered a non-success status (4xx is not retried, 5xx is)' },
  SAPI_EXTRACT_NOT_JSON: { retryable: false, meaning: 'the extracted API answered something that is not JSON' },
  SAPI_EXTRACT_RATE_LIMITED: { retryable: true, meaning: 'the extracted API asked to wait (429/503 + `Retry-After`): waited on a durable timer' },
  SAPI_EXTRACT_NETWORK: { retryable: true, meaning: "the extracted API could not be reached (after the fetcher's retries)" },
  SAPI_MISSING_DEPENDENCY: {
    retryable: false,
    meaning:
      'a feature needs an optional package that is not installed (the Azure Blob client for an Azure stack, the OpenTelemetry packages for tracing): the message names the feature and the `npm install` command; install it and restart the worker',
  },
  SAPI_BACKFILL_WINDOW_FAILED: {
    retryable: false,
    meaning: 'a window of a backfill failed (each named with its cause); the done windows are kept and not redone by a rerun under the same id',
  },
  SAPI_CLI_SCHEDULE_EXISTS: { retryable: false, meaning: 'CLI: a schedule with that id exists' },
  SAPI_CLI_SCHEDULE_NOT_FOUND: { retryable: false, meaning: 'CLI: no schedule with that id' },
  SAPI_CLI_WORKFLOW_NOT_FOUND: { retryable: false, meaning: 'CLI `status`/`wait`: no workflow with that id' },
  SAPI_CLI_TEMPORAL_UNREACHABLE: { retryable: true, meaning: 'CLI: Temporal could not be reached before anything started' },
  SAPI_CLI_TEMPORAL_LOST_CONTACT: { retryable: true, meaning: 'CLI: Temporal was unreachable for `--reconnect-timeout`; the workflow may still run (exit 3)' },
  SAPI_CLI_INTERRUPTED: { retryable: true, meaning: 'CLI: Ctrl-C stopped waiting (run commands and `wait`); the workflow keeps running (exit 130)' },
  SAPI_CLI_NO_WORKER: { retryable: false, meaning: 'CLI run commands: no worker polls the task queue; nothing was started (start `sapi-temporal worker`)' },
  SAPI_CLI_REPLAY_FAILED: {
    retryable: false,
    meaning: 'CLI `replay-check`: a history does not replay on the installed workflow code (deploying it would fail those runs)',
  },
  SAPI_CLI_VERIFY_FAILED: {
    retryable: false,
    meaning: "CLI `verify`: a table's rows do not match its load receipts (or the run has none); the checks say which",
  },
  SAPI_CLI_UPDATE_REFUSED: {
    retryable: false,
    meaning: 'CLI `pause`/`resume`/`cancel`/`limit`/`extend-deadline`: the run refused the update (nothing changed, nothing written to its history)',
  },
});

/**
 * Codes never worth retrying whatever the instance says: an activity's `retry.nonRetryableErrorTypes`. Instance-level
 * `retryable` covers the rest (e.g. a 501 server error, a 4xx of an extracted API).
 */
export const NON_RETRYABLE_ERROR_CODES: readonly string[] = Object.freeze(
  (Object.entries(ERROR_CODES) as Array<[SapiErrorCode, ErrorCodeInfo]>).filter(([, info]) => !info.retryable).map(([code]) => code),
);

/**
 * The class that raises each code: every code has exactly one, and a code is raised only by its class (or a subclass:
 * {@link SapiHttpError} is the {@link SapiStorageError} built from an HTTP answer). `test/unit/contracts/error-registry.test.ts`
 * reads every raise in src/ and holds the code to it. The classes outside this module: `WorkerStartError` is here
 * too; the extractor's are in `src/extractor/errors.ts`, `CliError` in `src/cli/failure.ts`. `ApplicationFailure`: codes
 * only workflow code raises, as an `ApplicationFailure` typed by the code (workflow code also raises the codes of
 * the classes so, since it cannot construct them: the type says which class's code it is).
 */
export const ERROR_CLASSES: Readonly<Record<string, readonly SapiErrorCode[]>> = Object.freeze({
  SapiStorageError: [
    SapiErrorCode.UNAUTHORIZED,
    SapiErrorCode.NOT_FOUND,
    SapiErrorCode.ALREADY_EXISTS,
    SapiErrorCode.VALIDATION,
    SapiErrorCode.CLIENT_ERROR,
    SapiErrorCode.RATE_LIMITED,
    SapiErrorCode.MAINTENANCE,
    SapiErrorCode.SERVER_ERROR,
  ],
  SapiNetworkError: [SapiErrorCode.NETWORK],
  SapiTimeoutError: [SapiErrorCode.TIMEOUT],
  SapiInvalidResponseError: [SapiErrorCode.INVALID_RESPONSE],
  SapiJobError: [SapiErrorCode.JOB_FAILED, SapiErrorCode.JOB_DEADLINE],
  SapiCredentialsExpiredError: [SapiErrorCode.CREDENTIALS_EXPIRED],
  SapiTransferError: [SapiErrorCode.UPLOAD_FAILED, SapiErrorCode.DOWNLOAD_FAILED, SapiErrorCode.CHECKSUM_MISMATCH],
  SapiInvalidInputError: [SapiErrorCode.INVALID_INPUT],
  SapiInputForbiddenError: [SapiErrorCode.INPUT_FORBIDDEN],
  SapiMissingDependencyError: [SapiErrorCode.MISSING_DEPENDENCY],
  WorkerStartError: [SapiErrorCode.WORKER_CONFIG, SapiErrorCode.TEMPORAL_NAMESPACE_NOT_FOUND],
  ExtractorConfigError: [SapiErrorCode.EXTRACT_CONFIG_INVALID],
  ExtractorDataError: [SapiErrorCode.EXTRACT_DATA_INVALID],
  PlaceholderMissingError: [SapiErrorCode.EXTRACT_PLACEHOLDER_MISSING],
  ExtractHttpStatusError: [SapiErrorCode.EXTRACT_HTTP_STATUS],
  ExtractNotJsonError: [SapiErrorCode.EXTRACT_NOT_JSON],
  ExtractRateLimitedError: [SapiErrorCode.EXTRACT_RATE_LIMITED],
  ExtractNetworkError: [SapiErrorCode.EXTRACT_NETWORK],
  CliError: [
    SapiErrorCode.CLI_SCHEDULE_EXISTS,
    SapiErrorCode.CLI_SCHEDULE_NOT_FOUND,
    SapiErrorCode.CLI_WORKFLOW_NOT_FOUND,
    SapiErrorCode.CLI_TEMPORAL_UNREACHABLE,
    SapiErrorCode.CLI_TEMPORAL_LOST_CONTACT,
    SapiErrorCode.CLI_INTERRUPTED,
    SapiErrorCode.CLI_NO_WORKER,
    SapiErrorCode.CLI_REPLAY_FAILED,
    SapiErrorCode.CLI_VERIFY_FAILED,
    SapiErrorCode.CLI_UPDATE_REFUSED,
  ],
  ApplicationFailure: [SapiErrorCode.CANCELLED, SapiErrorCode.BACKFILL_WINDOW_FAILED],
});

/** The class that raises `code` (see {@link ERROR_CLASSES}). */
export function errorClassOf(code: SapiErrorCode): string {
  return Object.entries(ERROR_CLASSES).find(([, codes]) => codes.includes(code))![0];
}

/** What a failed Storage job reported, for {@link describeJobFailure}. */
interface FailedJob {
  id: number | string;
  operationName?: string;
  tableId?: string | null;
  message: string;
  code?: string;
  exceptionId?: string;
}

/**
 * The one message of `SAPI_TEMPORAL_NAMESPACE_NOT_FOUND`, said alike by the worker and every CLI command:
 * `TEMPORAL_NAMESPACE "nope" does not exist on localhost:7233 (…)`.
 */
export function namespaceNotFoundMessage(namespace: string, address?: string): string {
  return `TEMPORAL_NAMESPACE "${namespace}" does not exist${address ? ` on ${address}` : ''} (create it, or set TEMPORAL_NAMESPACE / --namespace to an existing one)`;
}

/** The one message of `SAPI_JOB_FAILED`, raised by activities and by the polling workflow alike. */
export function describeJobFailure(job: FailedJob): string {
  return (
    `Storage job ${job.id} (${job.operationName ?? 'job'}${job.tableId ? ` on ${job.tableId}` : ''}) failed: ${job.message}` +
    `${job.code ? ` [code=${job.code}]` : ''}${job.exceptionId ? ` [exceptionId=${job.exceptionId}]` : ''}`
  );
}

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

/** The codes of the Storage API's verdicts on an operation ({@link SapiStorageError}). */
export type StorageErrorCode =
  | typeof SapiErrorCode.UNAUTHORIZED
  | typeof SapiErrorCode.NOT_FOUND
  | typeof SapiErrorCode.ALREADY_EXISTS
  | typeof SapiErrorCode.VALIDATION
  | typeof SapiErrorCode.CLIENT_ERROR
  | typeof SapiErrorCode.RATE_LIMITED
  | typeof SapiErrorCode.MAINTENANCE
  | typeof SapiErrorCode.SERVER_ERROR;

/**
 * The Storage API refused or failed an operation: from its HTTP answer ({@link SapiHttpError}), or from what a look at
 * its state found (a table to create is already there after a lost answer, a bucket to load into is missing).
 */
export class SapiStorageError extends SapiError {
  declare readonly code: StorageErrorCode;

  constructor(options: SapiErrorOptions & { code: StorageErrorCode }) {
    super(options);
  }
}

/**
 * The service answered with a non-2xx status other than 408. The code depends on the status (see {@link httpErrorCode});
 * a 408 is a {@link SapiTimeoutError} (phase `service`): the client picks the class (`httpStatusError`).
 */
export class SapiHttpError extends SapiStorageError {
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
    if (code === SapiErrorCode.TIMEOUT) throw new TypeError(`SapiHttpError: a ${options.status} answer is a SapiTimeoutError (use httpStatusError)`);
    const parts = [`${describe(options.request)} failed: ${options.status}`];
    if (options.serviceCode !== undefined) parts.push(options.serviceCode);
    if (options.serviceMessage !== undefined) parts.push(JSON.stringify(options.serviceMessage));
    else if (options.bodyExcerpt) parts.push(`body: ${JSON.stringify(options.bodyExcerpt)}`);
    if (options.exceptionId !== undefined) parts.push(`[exceptionId=${options.exceptionId}]`);
    const hint = httpErrorHint(code, options.retryAfterMs);
    super({
      code: code as StorageErrorCode,
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

/** The error of a non-2xx answer: a {@link SapiTimeoutError} for 408 (Request Timeout), else a {@link SapiHttpError}. */
export function httpStatusError(options: ConstructorParameters<typeof SapiHttpError>[0]): SapiHttpError | SapiTimeoutError {
  if (httpErrorCode(options.status) !== SapiErrorCode.TIMEOUT) return new SapiHttpError(options);
  return new SapiTimeoutError({
    request: options.request,
    phase: 'service',
    status: options.status,
    serviceCode: options.serviceCode,
    exceptionId: options.exceptionId,
    retryAfterMs: options.retryAfterMs,
    mayHaveReachedService: options.mayHaveReachedService ?? false,
  });
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

/** Connect, headers or body timeout, or the service's own (`service`: it answered 408 Request Timeout). */
export class SapiTimeoutError extends SapiError {
  constructor(options: {
    request: RequestDescription;
    phase: 'connect' | 'headers' | 'body' | 'service';
    timeoutMs?: number;
    /** Phase `service`: the status (408), the service's code, `exceptionId` and `Retry-After` (ms). */
    status?: number;
    serviceCode?: string;
    exceptionId?: string;
    retryAfterMs?: number;
    cause?: unknown;
    mayHaveReachedService: boolean;
  }) {
    const service = options.phase === 'service';
    super({
      code: SapiErrorCode.TIMEOUT,
      message: service
        ? `${describe(options.request)} failed: ${options.status ?? 408}${options.serviceCode !== undefined ? ` ${options.serviceCode}` : ''}: ` +
          `the service timed out waiting for the request${options.exceptionId !== undefined ? ` [exceptionId=${options.exceptionId}]` : ''}`
        : `${describe(options.request)} failed: ${options.phase} timeout` +
          `${options.timeoutMs !== undefined ? ` after ${options.timeoutMs} ms` : ''}` +
          ` (raise timeouts.${options.phase}Ms if the service is slow)`,
      retryable: true,
      status: options.status,
      serviceCode: options.serviceCode,
      exceptionId: options.exceptionId,
      retryAfterMs: options.retryAfterMs,
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

/**
 * A Storage job ended in `error` (`SAPI_JOB_FAILED`: its message, code and `exceptionId` in the message, see
 * `describeJobFailure`) or did not end in time (`SAPI_JOB_DEADLINE`). The polling workflow raises the same codes
 * as `ApplicationFailure`s.
 */
export class SapiJobError extends SapiError {
  constructor(options: {
    code: typeof SapiErrorCode.JOB_FAILED | typeof SapiErrorCode.JOB_DEADLINE;
    message: string;
    jobId: number | string;
    /** Default false: a failed job fails the same way again. */
    retryable?: boolean;
    /** The job's error code and exception id, as the service reported them. */
    serviceCode?: string;
    exceptionId?: string;
    details?: SapiErrorDetails;
    cause?: unknown;
  }) {
    super({
      code: options.code,
      message: options.message,
      retryable: options.retryable ?? false,
      serviceCode: options.serviceCode,
      exceptionId: options.exceptionId,
      details: { jobId: options.jobId, ...options.details },
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
  constructor(message: string, details?: SapiErrorDetails, options: { cause?: unknown } = {}) {
    super({ code: SapiErrorCode.INVALID_INPUT, message, retryable: false, details, cause: options.cause });
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

/**
 * A worker cannot start: `message` is one line naming the setting (`SAPI_WORKER_CONFIG`), or the Temporal namespace
 * does not exist (`SAPI_TEMPORAL_NAMESPACE_NOT_FOUND`). Never retried.
 */
export class WorkerStartError extends SapiError {
  constructor(
    message: string,
    options: { code?: typeof SapiErrorCode.WORKER_CONFIG | typeof SapiErrorCode.TEMPORAL_NAMESPACE_NOT_FOUND; cause?: unknown } = {},
  ) {
    super({ code: options.code ?? SapiErrorCode.WORKER_CONFIG, message, retryable: false, cause: options.cause });
  }
}

/**
 * `err` said where it happened: a copy of the same class (code, status, service fields and all) with `message` and
 * `details` added to its own, `err` its cause. For a step that adds its context to what a call below it raised.
 */
export function inContext<E extends SapiError>(err: E, message: string, details?: SapiErrorDetails): E {
  const copy = Object.create(Object.getPrototypeOf(err) as object, Object.getOwnPropertyDescriptors(err)) as E;
  const own = { configurable: true, writable: true, enumerable: false };
  Object.defineProperty(copy, 'message', { ...own, value: message });
  Object.defineProperty(copy, 'cause', { ...own, value: err });
  Object.defineProperty(copy, 'stack', { ...own, value: `${err.name}: ${message}\n${(err.stack ?? '').split('\n').slice(1).join('\n')}` });
  Object.defineProperty(copy, 'details', { ...own, enumerable: true, value: err.details || details ? { ...err.details, ...details } : undefined });
  return copy;
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
