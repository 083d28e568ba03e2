/**
 * Errors of the extractor: {@link SapiError}s with the registry's `SAPI_EXTRACT_…` codes (one registry, one
 * converter to `ApplicationFailure`). Workflow-safe: the registry and `SapiError` use no Node built-ins.
 */
import { SapiError, SapiErrorCode } from '../errors';

/** The registry's extractor codes (`SAPI_EXTRACT_…`). */
type ExtractorErrorCode =
  | typeof SapiErrorCode.EXTRACT_CONFIG_INVALID
  | typeof SapiErrorCode.EXTRACT_DATA_INVALID
  | typeof SapiErrorCode.EXTRACT_PLACEHOLDER_MISSING
  | typeof SapiErrorCode.EXTRACT_HTTP_STATUS
  | typeof SapiErrorCode.EXTRACT_NOT_JSON
  | typeof SapiErrorCode.EXTRACT_RATE_LIMITED
  | typeof SapiErrorCode.EXTRACT_NETWORK;

/** Options of `ExtractorError`. */
interface ExtractorErrorOptions {
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
  declare readonly code: ExtractorErrorCode;
  readonly url?: string;

  constructor(code: ExtractorErrorCode, message: string, options: ExtractorErrorOptions = {}) {
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
      SapiErrorCode.EXTRACT_CONFIG_INVALID,
      `Invalid extractor configuration (${issues.length} issue${issues.length === 1 ? '' : 's'}):\n${lines.join('\n')}`,
    );
    this.issues = issues;
    Object.assign(this, { details: { issues } });
  }
}

/** A response cannot be turned into records. */
export class ExtractorDataError extends ExtractorError {
  constructor(message: string) {
    super(SapiErrorCode.EXTRACT_DATA_INVALID, message);
  }
}

/** A child job placeholder has no value in its parent row. */
export class PlaceholderMissingError extends ExtractorError {
  constructor(message: string) {
    super(SapiErrorCode.EXTRACT_PLACEHOLDER_MISSING, message);
  }
}

/** The API answered a non-success status: retryable for 5xx and 408 (after the fetcher's own retries). */
export class ExtractHttpStatusError extends ExtractorError {
  constructor(message: string, options: { status: number; url: string; retryable: boolean; cause?: unknown }) {
    super(SapiErrorCode.EXTRACT_HTTP_STATUS, message, options);
  }
}

/** The API answered a body that is not JSON (HTML error page, invalid or empty JSON). Not retryable. */
export class ExtractNotJsonError extends ExtractorError {
  constructor(message: string, options: { status: number; url: string; cause?: unknown }) {
    super(SapiErrorCode.EXTRACT_NOT_JSON, message, { ...options, retryable: false });
  }
}

/**
 * The API answered 429/503 and asked to wait `retryAfterMs` (longer than the fetcher waits inline, or it kept
 * asking): wait on a durable timer, then retry. `retryAfterMs` is the fetcher's own backoff when no header came.
 */
export class ExtractRateLimitedError extends ExtractorError {
  declare readonly retryAfterMs: number;

  constructor(message: string, options: { status: number; url: string; retryAfterMs: number }) {
    super(SapiErrorCode.EXTRACT_RATE_LIMITED, message, { ...options, retryable: true });
  }
}

/** Connection refused/reset, DNS failure or timeout, after the fetcher's retries. Retryable. */
export class ExtractNetworkError extends ExtractorError {
  constructor(message: string, options: { url: string; cause?: unknown }) {
    super(SapiErrorCode.EXTRACT_NETWORK, message, { ...options, retryable: true });
  }
}
