/** Backoff between HTTP attempts, shared by the Storage API client and the extractor's page fetcher. Pure. */

/**
 * The wait before the retry that follows attempt `attempt` (1-based): full jitter over
 * `min(maxDelayMs, baseDelayMs × 2^(attempt-1))`, so many clients that failed together do not retry together.
 */
export function backoffDelayMs(attempt: number, baseDelayMs: number, maxDelayMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(maxDelayMs, baseDelayMs * 2 ** Math.max(0, attempt - 1));
  return Math.floor(random() * ceiling);
}
