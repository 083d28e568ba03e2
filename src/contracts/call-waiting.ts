/**
 * What a run shows while one of its calls waits an outage out (`waitingFor` in its progress): Temporal retries the
 * failed call (an activity) for the run's outage budget; the activity's worker tells the workflow each time an
 * attempt fails (a signal of this name, sent on the first attempts and then every fifth), and the workflow clears it
 * when the call ends.
 */
export interface CallWaiting {
  /** The call (activity type) being retried. */
  call: string;
  /** The attempt that failed last. */
  attempt: number;
  /** When the call was first scheduled (ISO): how long the run has been waiting. */
  since: string;
  /** When the attempt that failed last was scheduled (ISO, the server's time). */
  lastAttemptAt: string;
  /** Its failure type and first line, e.g. `SAPI_STORAGE_UNAVAILABLE GET /v2/storage/jobs/12 failed: 503`. */
  lastFailure: string;
  /** When the call's outage budget ends (ISO; its schedule-to-close), when it has one. */
  budgetEndsAt?: string;
}

/** The signal a worker sends a run of this package's workflows when one of its calls failed and will be retried. */
export const CALL_WAITING_SIGNAL = 'sapiCallWaiting';

/** The workflow types that handle {@link CALL_WAITING_SIGNAL} (the activities may run under a user's own workflow too). */
export const CALL_WAITING_WORKFLOW_TYPES: ReadonlySet<string> = new Set(['importTableWorkflow', 'exportTableWorkflow', 'extractWorkflow']);

/** Attempts after which the worker tells the run: the first five (the first minute or so), then every fifth. */
export function reportsAttempt(attempt: number): boolean {
  return attempt <= 5 || attempt % 5 === 0;
}

/** `value` when it is a well-formed {@link CallWaiting} (a signal anyone can send is only ever shown, never trusted). */
export function asCallWaiting(value: unknown): CallWaiting | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  const text = (x: unknown, max: number) => typeof x === 'string' && x.length <= max;
  if (!text(v.call, 200) || !text(v.since, 40) || !text(v.lastAttemptAt, 40) || !text(v.lastFailure, 2000)) return undefined;
  if (typeof v.attempt !== 'number' || !Number.isSafeInteger(v.attempt) || v.attempt < 1) return undefined;
  if (v.budgetEndsAt !== undefined && !text(v.budgetEndsAt, 40)) return undefined;
  return {
    call: v.call as string,
    attempt: v.attempt,
    since: v.since as string,
    lastAttemptAt: v.lastAttemptAt as string,
    lastFailure: v.lastFailure as string,
    ...(v.budgetEndsAt !== undefined ? { budgetEndsAt: v.budgetEndsAt as string } : {}),
  };
}
