/**
 * Errors of the extractor, each with a stable machine-readable `code`. Pure module (no Node built-ins): workflows
 * may import it to compare codes.
 */

/** Stable error codes (also used as `ApplicationFailure` types). */
export const ExtractorErrorCode = {
  /** The configuration is invalid; raised before any request. Not retryable. */
  ConfigInvalid: 'SAPI_EXTRACTOR_CONFIG_INVALID',
  /** A response could not be turned into records (e.g. two root arrays without `dataField`). Not retryable. */
  DataInvalid: 'SAPI_EXTRACT_DATA_INVALID',
  /** A child job's placeholder has no value in the parent row. Not retryable. */
  PlaceholderMissing: 'SAPI_EXTRACT_PLACEHOLDER_MISSING',
  /** The API answered a non-success HTTP status (after retries for 5xx). */
  HttpStatus: 'SAPI_EXTRACT_HTTP_STATUS',
  /** The API answered something that is not JSON (HTML error page, invalid JSON, empty body). */
  NotJson: 'SAPI_EXTRACT_NOT_JSON',
  /** The API answered 429/503 asking to wait (`retryAfterMs`) longer than the fetcher waits inline. */
  RateLimited: 'SAPI_EXTRACT_RATE_LIMITED',
  /** Connection refused/reset, DNS failure, timeout (after retries). */
  Network: 'SAPI_EXTRACT_NETWORK',
} as const;

/** One of `ExtractorErrorCode`'s values. */
export type ExtractorErrorCodeValue = (typeof ExtractorErrorCode)[keyof typeof ExtractorErrorCode];

/** Options of `ExtractorError`. */
export interface ExtractorErrorOptions {
  retryable?: boolean;
  /** HTTP status received, when the failure came from a response. */
  status?: number;
  /** How long the API asked us to wait (`Retry-After`), in milliseconds. */
  retryAfterMs?: number;
  /** The request URL (secrets in the query redacted). */
  url?: string;
  cause?: unknown;
}

/**
 * Base class: `code`, `retryable`, and for HTTP failures `status`, `url`, `retryAfterMs` (same field names as the
 * package's `SapiError`, so one converter can turn both into `ApplicationFailure`s).
 */
export class ExtractorError extends Error {
  /** Stable machine-readable code, see `ExtractorErrorCode`. */
  readonly code: ExtractorErrorCodeValue;
  /** Whether trying again later may succeed. */
  readonly retryable: boolean;
  readonly status?: number;
  readonly retryAfterMs?: number;
  readonly url?: string;

  constructor(code: ExtractorErrorCodeValue, message: string, options: ExtractorErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.retryable = options.retryable ?? false;
    this.status = options.status;
    this.retryAfterMs = options.retryAfterMs;
    this.url = options.url;
  }

  /** A plain JSON view (no stack, no cause), safe for logs and failure details. */
  toJSON(): Record<string, unknown> {
    const view: Record<string, unknown> = { name: this.name, code: this.code, message: this.message, retryable: this.retryable };
    if (this.status !== undefined) view.status = this.status;
    if (this.retryAfterMs !== undefined) view.retryAfterMs = this.retryAfterMs;
    if (this.url !== undefined) view.url = this.url;
    return view;
  }
}

/** One problem found in a configuration: where (`parameters.api.pagination.responseParam`) and what. */
export interface ConfigIssue {
  path: string;
  message: string;
}

/** The configuration is invalid. `issues` lists every problem; the message lists them with their paths. */
export class ExtractorConfigError extends ExtractorError {
  readonly issues: ConfigIssue[];

  constructor(issues: ConfigIssue[]) {
    const lines = issues.map((i) => `- ${i.path || '(root)'}: ${i.message}`);
    super(
      ExtractorErrorCode.ConfigInvalid,
      `Invalid extractor configuration (${issues.length} issue${issues.length === 1 ? '' : 's'}):\n${lines.join('\n')}`,
    );
    this.issues = issues;
  }
}

/** A response cannot be turned into records. */
export class ExtractorDataError extends ExtractorError {
  constructor(message: string) {
    super(ExtractorErrorCode.DataInvalid, message);
  }
}

/** A child job placeholder has no value in its parent row. */
export class PlaceholderMissingError extends ExtractorError {
  constructor(message: string) {
    super(ExtractorErrorCode.PlaceholderMissing, message);
  }
}

/** The API answered a non-success status: retryable for 5xx and 408 (after the fetcher's own retries). */
export class ExtractHttpStatusError extends ExtractorError {
  constructor(message: string, options: { status: number; url: string; retryable: boolean; cause?: unknown }) {
    super(ExtractorErrorCode.HttpStatus, message, options);
  }
}

/** The API answered a body that is not JSON (HTML error page, invalid or empty JSON). Not retryable. */
export class ExtractNotJsonError extends ExtractorError {
  constructor(message: string, options: { status: number; url: string; cause?: unknown }) {
    super(ExtractorErrorCode.NotJson, message, { ...options, retryable: false });
  }
}

/**
 * The API answered 429/503 and asked to wait `retryAfterMs` (longer than the fetcher waits inline, or it kept
 * asking): wait on a durable timer, then retry. `retryAfterMs` is the fetcher's own backoff when no header came.
 */
export class ExtractRateLimitedError extends ExtractorError {
  declare readonly retryAfterMs: number;

  constructor(message: string, options: { status: number; url: string; retryAfterMs: number }) {
    super(ExtractorErrorCode.RateLimited, message, { ...options, retryable: true });
  }
}

/** Connection refused/reset, DNS failure or timeout, after the fetcher's retries. Retryable. */
export class ExtractNetworkError extends ExtractorError {
  constructor(message: string, options: { url: string; cause?: unknown }) {
    super(ExtractorErrorCode.Network, message, { ...options, retryable: true });
  }
}
