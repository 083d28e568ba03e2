/**
 * The Generic-Extractor engine: configuration (zod), the pure pieces (re-exported from `./pure`), the HTTP page
 * fetcher and the plain in-process loop. NOT workflow-safe as a whole: workflows import `./pure` instead.
 */
export * from './pure';
export { ExtractorConfigError, ExtractorDataError, PlaceholderMissingError, ExtractHttpStatusError, ExtractNetworkError, ExtractNotJsonError, ExtractRateLimitedError, type ConfigIssue } from './errors';
export { extractorConfigInputSchema, formatPath, parseExtractorConfig, UNSUPPORTED_PAGINATION_METHODS } from './config-schema';
export { parseDurationMs } from './duration';
export { createPageFetcher, DEFAULT_FETCH_PAGE_OPTIONS, fetchPage, type FetchPageOptions, type FetchPageResult } from './http/fetch-page';
export { parseRetryAfterMs, redactUrl } from '../http';
export { runExtraction, type ExtractedTable, type ExtractionResult, type FetchedPage, type JobRunSummary, type RunExtractionOptions } from './run-loop';
