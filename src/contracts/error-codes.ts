/**
 * The error registry: every code this package raises, in one place, with whether retrying can help and what it
 * means. Codes are stable: they are the `type` of Temporal failures (workflows and users branch on them) and the
 * codes the CLI prints. One naming scheme: `SAPI_<AREA>_<WHAT>`, the Storage API ones without an area. Pure and
 * sandbox-safe: workflows, activities, the CLI and the README's error table (checked by a unit test) read it.
 */

export const ErrorCode = {
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

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** What the registry says of a code. */
export interface ErrorCodeInfo {
  /** False: never retried. True: retried unless the error itself says it is not worth it (e.g. a 501, a 4xx). */
  retryable: boolean;
  /** What it means and what to do, for the README's table. */
  meaning: string;
}

/** Every code with its meaning. The README's "Errors" table is this, rendered (a unit test compares them). */
export const ERROR_CODES: Readonly<Record<ErrorCode, ErrorCodeInfo>> = Object.freeze({
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
  SAPI_INVALID_RESPONSE: { retryable: true, meaning: 'the response did not match what we expect (schema, unknown job status: not retried; an HTML page instead of JSON: retried)' },
  SAPI_JOB_FAILED: { retryable: false, meaning: "a Storage job ended in `error`; carries the job's message, code and exceptionId" },
  SAPI_JOB_DEADLINE: { retryable: false, meaning: 'a Storage job did not end within `polling.deadlineMs`; it may still finish on the service' },
  SAPI_CREDENTIALS_EXPIRED: { retryable: true, meaning: 'temporary object-storage credentials expired: an upload prepares a fresh file, a download fetches new ones' },
  SAPI_UPLOAD_FAILED: { retryable: true, meaning: 'an object-storage upload failed (bucket, key and part in the message)' },
  SAPI_DOWNLOAD_FAILED: { retryable: true, meaning: 'an object-storage download or a source read failed' },
  SAPI_CHECKSUM_MISMATCH: { retryable: true, meaning: 'bytes stored or received differ from what was sent or expected (size, MD5, ETag)' },
  SAPI_INVALID_INPUT: { retryable: false, meaning: 'the input cannot work (bad ids, unreadable or empty source, invalid header names, bad options)' },
  SAPI_INPUT_FORBIDDEN: { retryable: false, meaning: "an input names a path, URL, object or secret destination the worker's input policy does not allow, or another run's state (its staging, file, table or bucket) (the field and the rule in the message; see Security)" },
  SAPI_CANCELLED: { retryable: false, meaning: 'the run was cancelled (`cancel` update or workflow cancellation)' },
  SAPI_WORKER_CONFIG: { retryable: false, meaning: 'the worker did not start: a setting it checks at start is missing or wrong (no Storage connection, a Storage URL it cannot reach, a rejected token), or its own activities have names of the plugin\'s; the setting or the names are in the message' },
  SAPI_TEMPORAL_NAMESPACE_NOT_FOUND: { retryable: false, meaning: 'the Temporal namespace does not exist on that server (worker start and every CLI command): check `TEMPORAL_NAMESPACE` / `--namespace`' },
  SAPI_EXTRACT_CONFIG_INVALID: { retryable: false, meaning: 'the extractor configuration is invalid; every issue listed with its path, before any request' },
  SAPI_EXTRACT_DATA_INVALID: { retryable: false, meaning: 'a response cannot be turned into records (e.g. two root arrays and no `dataField`)' },
  SAPI_EXTRACT_PLACEHOLDER_MISSING: { retryable: false, meaning: "a child job's placeholder has no value in its parent row" },
  SAPI_EXTRACT_HTTP_STATUS: { retryable: true, meaning: 'the extracted API answered a non-success status (4xx is not retried, 5xx is)' },
  SAPI_EXTRACT_NOT_JSON: { retryable: false, meaning: 'the extracted API answered something that is not JSON' },
  SAPI_EXTRACT_RATE_LIMITED: { retryable: true, meaning: 'the extracted API asked to wait (429/503 + `Retry-After`): waited on a durable timer' },
  SAPI_EXTRACT_NETWORK: { retryable: true, meaning: 'the extracted API could not be reached (after the fetcher\'s retries)' },
  SAPI_CLI_SCHEDULE_EXISTS: { retryable: false, meaning: 'CLI: a schedule with that id exists' },
  SAPI_CLI_SCHEDULE_NOT_FOUND: { retryable: false, meaning: 'CLI: no schedule with that id' },
  SAPI_CLI_WORKFLOW_NOT_FOUND: { retryable: false, meaning: 'CLI `status`/`wait`: no workflow with that id' },
  SAPI_CLI_TEMPORAL_UNREACHABLE: { retryable: true, meaning: 'CLI: Temporal could not be reached before anything started' },
  SAPI_CLI_TEMPORAL_LOST_CONTACT: { retryable: true, meaning: 'CLI: Temporal was unreachable for `--reconnect-timeout`; the workflow may still run (exit 3)' },
  SAPI_CLI_INTERRUPTED: { retryable: true, meaning: 'CLI: Ctrl-C stopped waiting (run commands and `wait`); the workflow keeps running (exit 130)' },
  SAPI_CLI_NO_WORKER: { retryable: false, meaning: 'CLI run commands: no worker polls the task queue; nothing was started (start `sapi-temporal worker`)' },
  SAPI_CLI_REPLAY_FAILED: { retryable: false, meaning: 'CLI `replay-check`: a history does not replay on the installed workflow code (deploying it would fail those runs)' },
  SAPI_CLI_VERIFY_FAILED: { retryable: false, meaning: "CLI `verify`: a table's rows do not match its load receipts (or the run has none); the checks say which" },
  SAPI_CLI_UPDATE_REFUSED: { retryable: false, meaning: 'CLI `pause`/`resume`/`cancel`/`limit`/`extend-deadline`: the run refused the update (nothing changed, nothing written to its history)' },
});

/**
 * Codes never worth retrying whatever the instance says: an activity's `retry.nonRetryableErrorTypes`. Instance-level
 * `retryable` covers the rest (e.g. a 501 server error, a 4xx of an extracted API).
 */
export const NON_RETRYABLE_ERROR_CODES: readonly string[] = Object.freeze(
  (Object.entries(ERROR_CODES) as Array<[ErrorCode, ErrorCodeInfo]>).filter(([, info]) => !info.retryable).map(([code]) => code),
);

/** What a failed Storage job reported, for {@link describeJobFailure}. */
export interface FailedJob {
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
