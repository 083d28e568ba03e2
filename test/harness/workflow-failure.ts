import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';

/** The `ApplicationFailure` a failed workflow ended with (the run must fail with a `WorkflowFailedError`). */
export async function failureOf(promise: Promise<unknown>): Promise<ApplicationFailure> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(WorkflowFailedError);
  let cause = (err as WorkflowFailedError).cause;
  while (cause && !(cause instanceof ApplicationFailure)) cause = (cause as Error & { cause?: Error }).cause;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  return cause as ApplicationFailure;
}
