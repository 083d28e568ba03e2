import { Context } from '@temporalio/activity';
import { toApplicationFailure } from '../errors';
import type { ProgressReport } from '../workflows/types';

/** Minimum time between two progress signals an activity sends to its workflow (ms). */
export const PROGRESS_SIGNAL_INTERVAL_MS = 5_000;

/** Runs an activity body and turns whatever it throws into an `ApplicationFailure` typed by our error code. */
export async function asActivity<T>(body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (err) {
    throw toApplicationFailure(err);
  }
}

/** Details of the last heartbeat of a previous attempt (what a retry resumes from), if any. */
export function lastHeartbeat<T>(): T | undefined {
  return Context.current().info.heartbeatDetails as T | undefined;
}

/**
 * Heartbeats `state` on every call (the SDK throttles what reaches the server) and, at most every
 * {@link PROGRESS_SIGNAL_INTERVAL_MS}, signals the workflow with the byte count so its `progress` query is live.
 * The signal is best effort: a failed signal never fails the transfer.
 */
export function progressReporter(): (state: unknown, report: ProgressReport, force?: boolean) => void {
  const context = Context.current();
  let lastSignalAt = 0;
  return (state, report, force = false) => {
    context.heartbeat(state);
    const now = Date.now();
    if (!force && now - lastSignalAt < PROGRESS_SIGNAL_INTERVAL_MS) return;
    lastSignalAt = now;
    const { workflowExecution } = context.info;
    if (!workflowExecution) return; // a standalone activity: no workflow to tell
    let client;
    try {
      client = context.client;
    } catch {
      return; // no client in this context (e.g. MockActivityEnvironment)
    }
    client.workflow
      .getHandle(workflowExecution.workflowId, workflowExecution.runId)
      .signal('transferProgress', report)
      .catch(() => undefined);
  };
}
