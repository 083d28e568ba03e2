/**
 * Retry budgets bounded by a deadline: the retries a call makes in-process (the Storage API client's, the S3 SDK's)
 * must end before the activity attempt that runs them does, or they keep working for an attempt Temporal already
 * timed out (and retries elsewhere). Pure: the clock is passed in.
 */

/** Time kept before the deadline for the failure to reach the activity's result. Default 2 s. */
export const DEADLINE_MARGIN_MS = 2_000;
/** An attempt that would have less than this before the deadline is not started. Default 1 s. */
export const MIN_ATTEMPT_MS = 1_000;

/** The end of the time a caller has (ms since epoch), asked at each call; undefined: no bound. */
export type Deadline = () => number | undefined;

/** Milliseconds an attempt started at `nowMs` may last (the deadline less its margin); undefined without a deadline. */
export function attemptBudgetMs(deadlineMs: number | undefined, nowMs: number, marginMs: number = DEADLINE_MARGIN_MS): number | undefined {
  return deadlineMs === undefined ? undefined : Math.max(0, deadlineMs - marginMs - nowMs);
}

/**
 * Whether a retry after a wait of `delayMs` still leaves its attempt {@link MIN_ATTEMPT_MS} before the deadline (less
 * its margin). Without a deadline every retry the policy allows fits.
 */
export function retryFits(deadlineMs: number | undefined, nowMs: number, delayMs: number, marginMs: number = DEADLINE_MARGIN_MS): boolean {
  const budget = attemptBudgetMs(deadlineMs, nowMs, marginMs);
  return budget === undefined || delayMs + MIN_ATTEMPT_MS <= budget;
}

/**
 * The deadline of an activity attempt that started (here) at `startedMs`: its start-to-close counted from then (the
 * server counts from its dispatch, a moment earlier: the margin covers it; not from the scheduling, which may lie
 * minutes before in a busy queue), and the activity's schedule-to-close from its first scheduling; the earlier of the
 * two. A timeout of 0 is none.
 */
export function activityAttemptDeadlineMs(
  info: { startToCloseTimeoutMs: number; scheduledTimestampMs: number; scheduleToCloseTimeoutMs: number },
  startedMs: number,
): number | undefined {
  const ends = [
    info.startToCloseTimeoutMs > 0 ? startedMs + info.startToCloseTimeoutMs : undefined,
    info.scheduleToCloseTimeoutMs > 0 ? info.scheduledTimestampMs + info.scheduleToCloseTimeoutMs : undefined,
  ].filter((end): end is number => end !== undefined);
  return ends.length ? Math.min(...ends) : undefined;
}
