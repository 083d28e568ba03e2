import { ApplicationFailure, workflowInfo } from '@temporalio/workflow';
import { SapiErrorCode } from '../errors';

/**
 * The internal state a run hands to the run it continues as (`resume`), checked before anything runs: only a run of
 * the same continue-as-new chain may carry it (Temporal sets `continuedFromExecutionRunId` on a continued run; no
 * starter can), so a start that names another run's file, bucket, job or staging is refused with
 * `SAPI_INPUT_FORBIDDEN`. The state itself is never part of a public input type.
 */
export function ownContinuation<R>(resume: R | undefined, what: string): R | undefined {
  if (resume === undefined) return undefined;
  if (workflowInfo().continuedFromExecutionRunId === undefined) {
    throw ApplicationFailure.create({
      type: SapiErrorCode.INPUT_FORBIDDEN,
      message: `${what}: input field resume is the internal state of a continued run; a started run may not carry it`,
      nonRetryable: true,
      details: [{ field: 'resume' }],
    });
  }
  return resume;
}
