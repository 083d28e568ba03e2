/**
 * Pure helpers for polling a Storage job: the delay schedule and the classification of a job record.
 * This module has NO value imports, so workflow code (Temporal's sandbox) can import it: the workflow polls
 * with durable timers, an activity fetches the job, and both agree on these rules.
 */

/**
 * Poll schedule: first wait `initialMs`, multiply by `factor` each time, never wait more than `maxMs`, nor more
 * than `elapsedFraction` of the time the job has been waited for (but at least `initialMs`).
 */
export interface PollSchedule {
  /** First delay. Default 1 000 ms. */
  initialMs: number;
  /** Growth per poll. Default 2. */
  factor: number;
  /** Cap of one delay. Default 20 000 ms (what the official clients use). */
  maxMs: number;
  /**
   * Cap of one delay as a fraction of the time waited so far. Default 0.25: a job's end is noticed within
   * max(`initialMs`, 25 % of its duration). `0` turns the cap off (plain ×`factor` backoff).
   */
  elapsedFraction: number;
}

/**
 * How long the short path of a small import waits for its job inside the activity that started it (polling it at
 * 50 ms, doubling, at most 500 ms apart) before it leaves the polling to the workflow's timers (ms); never longer
 * than the job's deadline.
 */
export const SHORT_PATH_JOB_WAIT_MS = 5_000;

/** Defaults: 1 s, ×2, capped at 20 s and at 25 % of the time waited so far. */
export const DEFAULT_POLL_SCHEDULE: Readonly<PollSchedule> = Object.freeze({ initialMs: 1_000, factor: 2, maxMs: 20_000, elapsedFraction: 0.25 });

/**
 * Delay before poll number `attempt` (0-based: 0 → `initialMs`). Deterministic (no jitter) so it is safe in
 * workflow code; the service's job runner adds plenty of natural jitter.
 */
export function pollBackoff(attempt: number, schedule: Partial<PollSchedule> = {}): number {
  const initialMs = schedule.initialMs ?? DEFAULT_POLL_SCHEDULE.initialMs;
  const factor = schedule.factor ?? DEFAULT_POLL_SCHEDULE.factor;
  const maxMs = schedule.maxMs ?? DEFAULT_POLL_SCHEDULE.maxMs;
  const n = Math.max(0, Math.floor(attempt));
  // Avoid Infinity for huge attempt numbers: stop multiplying once the cap is reached.
  let delay = initialMs;
  for (let i = 0; i < n && delay < maxMs; i++) delay *= factor;
  return Math.min(maxMs, Math.max(0, Math.round(delay)));
}

/**
 * Delay before poll `attempt`: the ×`factor` backoff, capped at `elapsedFraction` × `elapsedMs` (the time waited
 * for the job so far; never below `initialMs`), and never past `deadlineAtMs` (returns the remaining time, possibly
 * 0). A job that ends just after a poll is seen one delay later, and that delay is ≤ max(`initialMs`, 25 % of the
 * time waited), so the job's end is noticed within max(1 s, 25 % of its duration) with the defaults. Long jobs
 * still settle at one poll every `maxMs`.
 */
export function nextPollDelay(input: { attempt: number; nowMs: number; elapsedMs?: number; deadlineAtMs?: number; schedule?: Partial<PollSchedule> }): number {
  let delay = pollBackoff(input.attempt, input.schedule);
  const fraction = input.schedule?.elapsedFraction ?? DEFAULT_POLL_SCHEDULE.elapsedFraction;
  if (input.elapsedMs !== undefined && fraction > 0) {
    const initialMs = input.schedule?.initialMs ?? DEFAULT_POLL_SCHEDULE.initialMs;
    delay = Math.min(delay, Math.max(initialMs, Math.round(fraction * input.elapsedMs)));
  }
  if (input.deadlineAtMs === undefined) return delay;
  return Math.max(0, Math.min(delay, input.deadlineAtMs - input.nowMs));
}

/** The fields of a job record the classifier reads (a subset of the storage-api `Job` type). */
export interface JobLike {
  id?: number | string;
  status: string;
  operationName?: string;
  error?: string | { code?: string | number | null; message?: string; exceptionId?: string | null } | null;
  results?: unknown;
}

/** What a job record means for the poller. */
export type JobOutcome =
  { kind: 'pending'; status: string } | { kind: 'success'; results: unknown } | { kind: 'error'; message: string; code?: string; exceptionId?: string };

/**
 * Classifies a job: `waiting`/`processing` → pending; `success` → success with `results`; `error` → error with
 * message/code/exceptionId (the error is a string in a 202 response, an object in a polled job). Any other
 * status is reported as an error so the caller stops instead of polling forever.
 */
export function jobOutcome(job: JobLike): JobOutcome {
  switch (job.status) {
    case 'waiting':
    case 'processing':
      return { kind: 'pending', status: job.status };
    case 'success':
      return { kind: 'success', results: job.results ?? null };
    case 'error': {
      const err = job.error;
      if (typeof err === 'string') return { kind: 'error', message: err || 'job failed without a message' };
      if (err && typeof err === 'object') {
        const out: { kind: 'error'; message: string; code?: string; exceptionId?: string } = {
          kind: 'error',
          message: typeof err.message === 'string' && err.message !== '' ? err.message : 'job failed without a message',
        };
        if (err.code !== undefined && err.code !== null && err.code !== '') out.code = String(err.code);
        if (typeof err.exceptionId === 'string' && err.exceptionId !== '') out.exceptionId = err.exceptionId;
        return out;
      }
      return { kind: 'error', message: 'job failed without a message' };
    }
    default:
      return { kind: 'error', message: `unexpected job status ${JSON.stringify(job.status)}`, code: 'unexpectedStatus' };
  }
}
