import type { ActivityOptions } from '@temporalio/workflow';
import { NON_RETRYABLE_ERROR_CODES } from '../errors';

/** Short Storage API calls (prepare, start a job, poll): a few minutes, bounded retries, typed non-retryables. */
export const activityOptions: ActivityOptions = {
  startToCloseTimeout: '5 minutes',
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
 * resumes from the last heartbeat). Expired credentials are not retried here: the workflow prepares again.
 */
export function transferOptions(taskQueue?: string): ActivityOptions {
  return {
    taskQueue,
    startToCloseTimeout: '12 hours',
    heartbeatTimeout: '30 seconds',
    retry: {
      initialInterval: '1 second',
      backoffCoefficient: 2,
      maximumInterval: '1 minute',
      maximumAttempts: 20,
      nonRetryableErrorTypes: [...NON_RETRYABLE_ERROR_CODES, 'SAPI_CREDENTIALS_EXPIRED'],
    },
  };
}
