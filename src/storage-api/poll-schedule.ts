/**
 * Pure helpers for polling a Storage job: the delay schedule and the classification of a job record.
 * This module has NO value imports, so workflow code (Temporal's sandbox) can import it: the workflow polls
 * with durable timers, an activity fetches the job, and both agree on these rules.
 */

/** Poll schedule: first wait `initialMs`, multiply by `factor` each time, never wait more than `maxMs`. */
export interface PollSchedule {
  /** First delay. Default 1 000 ms. */
  initialMs: number;
  /** Growth per poll. Default 2. */
  factor: number;
  /** Cap of one delay. Default 20 000 ms (what the official clients use). */
  maxMs: number;
}

/** Defaults: 1 s, ×2, capped at 20 s. */
export const DEFAULT_POLL_SCHEDULE: Readonly<PollSchedule> = Object.freeze({ initialMs: 1_000, factor: 2, maxMs: 20_000 });

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
 * Delay before poll `attempt` that also respects a deadline: never sleeps past `deadlineAtMs` (returns the
 * remaining time, possibly 0). Keeps "job completion noticed within max(1 s, 25 % of its duration)": with ×2
 * backoff a job finishing just after a poll is seen at most one delay later, and each delay is ≤ the time elapsed.
 */
export function nextPollDelay(input: { attempt: number; nowMs: number; deadlineAtMs?: number; schedule?: Partial<PollSchedule> }): number {
  const delay = pollBackoff(input.attempt, input.schedule);
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
  | { kind: 'pending'; status: string }
  | { kind: 'success'; results: unknown }
  | { kind: 'error'; message: string; code?: string; exceptionId?: string };

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
