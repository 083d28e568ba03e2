/**
 * The one HTTP layer under the Storage API client, the extractor's page fetcher and the byte sources: `Retry-After`
 * parsing, backoff, URL redaction and the connection pools. Where retrying happens: an HTTP call retries short
 * blips itself (a few attempts, seconds of backoff, `Retry-After` honoured up to a cap); anything longer fails the
 * activity, and Temporal retries the activity with its own backoff (visible in history, surviving worker restarts).
 */
export { parseRetryAfterMs } from './retry-after';
export { backoffDelayMs } from './backoff';
export { redactUrl } from './redact';
export { closeDefaultHttpPools, createHttpPools, defaultHttpPools, type HttpPools } from './pools';
export { activityAttemptDeadlineMs, attemptBudgetMs, DEADLINE_MARGIN_MS, type Deadline, MIN_ATTEMPT_MS, retryFits } from './deadline';
