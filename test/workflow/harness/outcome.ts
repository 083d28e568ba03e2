// How a run or an update ended, for the workflow tier's assertions.
import { WorkflowFailedError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure, ChildWorkflowFailure } from '@temporalio/common';

/** The error code of a failed run: the workflow's failure, or the cause of the activity or child failure it passed on. */
export function codeOf(err: unknown): string | undefined {
  let cause = err instanceof WorkflowFailedError ? err.cause : err;
  while (cause instanceof ActivityFailure || cause instanceof ChildWorkflowFailure) cause = cause.cause;
  return cause instanceof ApplicationFailure ? (cause.type ?? undefined) : undefined;
}

/** The failure `promise` ends with (a completed run fails the test). */
export async function failureOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('the run completed; a failure was expected');
    },
    (err: unknown) => err,
  );
}

/** `accepted`, or the message the update's validator refused it with. */
export async function refusalOf(update: Promise<unknown>): Promise<string> {
  return update.then(
    () => 'accepted',
    (err: unknown) => (err instanceof WorkflowUpdateFailedError ? String(err.cause?.message) : `not a refusal: ${String(err)}`),
  );
}

/** How a run ended: its result or its failure. */
export interface Settled<T> {
  result?: T;
  failure?: unknown;
}

/** The outcome of `handle.result()` without throwing. */
export async function settled<T>(result: Promise<T>): Promise<Settled<T>> {
  return result.then(
    (value) => ({ result: value }),
    (failure: unknown) => ({ failure }),
  );
}
