import type { ActivityOptions } from '@temporalio/workflow';
import { ErrorCode, NON_RETRYABLE_ERROR_CODES } from '../contracts/error-codes';

/**
 * Short Storage API calls (prepare, start a job, poll): a few minutes, bounded retries, typed non-retryables. They
 * heartbeat while they run (see `asActivity`), so a worker that dies mid-call is noticed within the heartbeat
 * timeout and another worker takes over (within ~10 s, not after the 5-minute start-to-close timeout).
 */
export const activityOptions: ActivityOptions = {
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '10 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    maximumAttempts: 10,
    nonRetryableErrorTypes: [...NON_RETRYABLE_ERROR_CODES],
  },
};

/**
 * Uploads and downloads: long, heartbeating (a dead worker is noticed within the heartbeat timeout and the retry
 * resumes from the last heartbeat). Expired upload credentials are not retried here: they belong to the prepared
 * file, so the workflow prepares again. A download fetches its read credentials in every attempt, so for a download
 * (`kind: 'download'`) an expiry is retried like any transient fault and the retry resumes with fresh ones.
 */
export function transferOptions(taskQueue?: string, kind: 'upload' | 'download' = 'upload'): ActivityOptions {
  return {
    taskQueue,
    startToCloseTimeout: '12 hours',
    heartbeatTimeout: '20 seconds',
    retry: {
      initialInterval: '1 second',
      backoffCoefficient: 2,
      maximumInterval: '1 minute',
      maximumAttempts: 20,
      nonRetryableErrorTypes: kind === 'upload' ? [...NON_RETRYABLE_ERROR_CODES, ErrorCode.CREDENTIALS_EXPIRED] : [...NON_RETRYABLE_ERROR_CODES],
    },
  };
}

/** Short calls that must run where the sources are (checks of a local file): {@link activityOptions} on that queue. */
export function shortTransferOptions(taskQueue?: string): ActivityOptions {
  return { ...activityOptions, taskQueue };
}
