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

/** Base class: `code`, `retryable`, optional `cause`. */
export class ExtractorError extends Error {
  /** Stable machine-readable code, see `ExtractorErrorCode`. */
  readonly code: ExtractorErrorCodeValue;
  /** Whether trying again later may succeed. */
  readonly retryable: boolean;

  constructor(code: ExtractorErrorCodeValue, message: string, options: { retryable?: boolean; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.retryable = options.retryable ?? false;
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
