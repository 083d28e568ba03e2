/**
 * Errors of the extractor: {@link SapiError}s with the registry's `SAPI_EXTRACT_…` codes (one registry, one
 * converter to `ApplicationFailure`). Workflow-safe: the registry and `SapiError` use no Node built-ins.
 */
import { ErrorCode } from '../errors/codes';
import { SapiError } from '../errors';

/** The extractor's codes in the registry, by short name. */
export const ExtractorErrorCode = {
  ConfigInvalid: ErrorCode.EXTRACT_CONFIG_INVALID,
  DataInvalid: ErrorCode.EXTRACT_DATA_INVALID,
  PlaceholderMissing: ErrorCode.EXTRACT_PLACEHOLDER_MISSING,
  HttpStatus: ErrorCode.EXTRACT_HTTP_STATUS,
  NotJson: ErrorCode.EXTRACT_NOT_JSON,
  RateLimited: ErrorCode.EXTRACT_RATE_LIMITED,
  Network: ErrorCode.EXTRACT_NETWORK,
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

/** Base class of the extractor's errors: a `SapiError` with the request `url` (redacted) when there was one. */
export class ExtractorError extends SapiError {
  declare readonly code: ExtractorErrorCodeValue;
  readonly url?: string;

  constructor(code: ExtractorErrorCodeValue, message: string, options: ExtractorErrorOptions = {}) {
    super({
      code,
      message,
      retryable: options.retryable ?? false,
      status: options.status,
      retryAfterMs: options.retryAfterMs,
      details: options.url === undefined ? undefined : { url: options.url },
      cause: options.cause,
    });
    this.url = options.url;
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
    Object.assign(this, { details: { issues } });
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
