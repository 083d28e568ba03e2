// Following a started workflow to its end — the one loop behind `import`, `export`, `extract` and `wait`: the
// progress bar, Ctrl-C, riding out Temporal outages, and printing the result (summary or one JSON object).
import { progressQuery } from '../workflows';
import { INTERRUPTED_EXIT_CODE, onStopSignals } from './common';
import { CliError, CommandFailedError, describeFailure, failureCode } from './failure';
import { heartbeatProgress, withLive, type LiveProgress } from '../live-progress';
import { activityRetries, formatDuration, plainProgress, pollProgress, progressBar, RETRY_POLL_MS, type ProgressView, type RunProgress } from './progress';
import { TemporalLostError } from './reconnect';
import type { Summary } from './context';
import type { TemporalLink } from './temporal-link';
import { SapiErrorCode } from '../errors';

/** Longest wait for one progress query (ms); a slow answer is skipped, the next poll asks again. */
export const PROGRESS_QUERY_TIMEOUT_MS = 5_000;

/** One workflow to follow, as `runTransfer` (just started) or `wait` (found by id) describes it. */
interface FollowRequest {
  /** `import`, `export`, `extract`: names the run in messages. */
  verb: string;
  workflowId: string;
  /** First run of the chain: the result is followed from it through continue-as-new. */
  firstExecutionRunId: string;
  /** One JSON object `{workflowId, runId, ...result}` on stdout; no progress bar, no summary. */
  json: boolean;
  /** Give up after Temporal was unreachable this long (ms). */
  reconnectTimeoutMs: number;
  /**
   * First Ctrl-C: `detach` stops waiting (exit 130), the workflow runs on; `cancel` (`--cancel-on-interrupt`) sends
   * the workflow's cancel signal and keeps waiting for it to end.
   */
  onInterrupt: 'cancel' | 'detach';
  /** When the run began (epoch ms), for the summary's duration (which ends when the workflow closed, not now). */
  startedAt: number;
  /** Size of the data to move (bytes) when the CLI knows it (a local file to import): the bar's total while the progress has none. */
  totalBytes?: number;
  summarize(result: object): Summary;
}

/** How to pick a run up again, for messages: `sapi-temporal wait <id>`. */
export function reattachHint(workflowId: string): string {
  return `sapi-temporal wait ${workflowId}`;
}

/** Follows the workflow to its end and prints its result: one JSON object with `json`, else the summary. */
export async function followAndPrint(link: TemporalLink, request: FollowRequest): Promise<void> {
  const result = await followWorkflow(link, request);
  if (request.json) {
    process.stdout.write(`${JSON.stringify({ workflowId: request.workflowId, runId: request.firstExecutionRunId, ...result })}\n`);
    return;
  }
  const { title, fields } = request.summarize(result);
  // the run's own duration: `wait` on a run that ended long ago must not count the time since
  const closedAt = await link.client.workflow
    .getHandle(request.workflowId)
    .describe()
    .then((described) => described.closeTime?.getTime())
    .catch(() => undefined);
  printSummary(title, [
    ...fields,
    ['workflow', request.workflowId],
    ['run id', request.firstExecutionRunId],
    ['duration', formatDuration(Math.max(0, (closedAt ?? Date.now()) - request.startedAt))],
  ]);
}

/**
 * The last progress line of a finished run, from its result where it says more than the last poll saw: the whole
 * size and every slice (`643.2 MB, slices 11/11`), not the first slice's bytes the last heartbeat reported.
 */
export function finalProgress(last: RunProgress, result: object): RunProgress {
  const { bytes, slices, jobId } = result as { bytes?: unknown; slices?: unknown; jobId?: unknown };
  // a small import's job can start and end inside one activity: no poll saw it, the result names it
  const job = last.jobId ?? (typeof jobId === 'number' ? jobId : undefined);
  const done: RunProgress = { ...last, phase: 'done', jobId: job, jobStatus: job === undefined ? undefined : 'success' };
  if (typeof bytes === 'number') Object.assign(done, { bytes, totalBytes: bytes });
  if (typeof slices === 'number' && slices > 1) Object.assign(done, { slices, slicesDone: slices });
  return done;
}

/** The progress with the CLI's own total added while the workflow reports none (the bytes of a local file being uploaded). */
export function withTotal(progress: RunProgress, totalBytes: number | undefined): RunProgress {
  if (totalBytes === undefined || progress.totalBytes !== undefined || progress.phase !== 'uploading') return progress;
  return { ...progress, totalBytes };
}

/** The progress display on stderr: none with `json`, a bar on a terminal, plain lines otherwise (CI, cron, a log). */
function progressView(verb: string, json: boolean, stream: NodeJS.WriteStream = process.stderr): ProgressView | undefined {
  if (json) return undefined;
  return stream.isTTY ? progressBar(stream, verb) : plainProgress((line) => stream.write(line), verb);
}

/**
 * Waits for the workflow's result while the progress display ({@link progressView}) follows the `progress` query
 * and the activities Temporal is retrying (attempt, last failure). Temporal being unreachable is said once per outage on stderr and ridden out (fresh connection, 1 s ×2 up
 * to 10 s) for `reconnectTimeoutMs`; the workflow runs on meanwhile. Rejects with the workflow's failure, a
 * {@link TemporalLostError}, or (`detach`) a {@link CliError} with exit code 130 after Ctrl-C.
 */
async function followWorkflow(link: TemporalLink, request: FollowRequest): Promise<object> {
  const { verb, workflowId, firstExecutionRunId } = request;
  let view = progressView(verb, request.json);
  const onTerminal = process.stderr.isTTY === true;
  let last: RunProgress = { phase: 'starting', bytes: 0 };
  // the client is looked up per query: it is a new one after each reconnection
  const withDeadline = <T>(call: () => Promise<T>) => link.client.withDeadline(Date.now() + PROGRESS_QUERY_TIMEOUT_MS, call);
  // the step in flight (bytes of a transfer, pages of a batch) from its activity's heartbeat, added to each answer
  let live: LiveProgress | undefined;
  let checkpointPages: number | undefined;
  const stopPolling = view
    ? pollProgress(
        () => withDeadline(() => link.client.workflow.getHandle(workflowId).query(progressQuery)),
        (progress: RunProgress) => {
          // the checkpoint moved on: the heartbeat seen before may belong to a batch it now counts (read it again)
          if (progress.pages !== undefined && progress.pages !== checkpointPages) [checkpointPages, live] = [progress.pages, undefined];
          view?.update((last = withTotal(withLive(progress, live), request.totalBytes)));
        },
      )
    : () => undefined;
  const stopRetryPolling = view
    ? pollProgress(
        () =>
          withDeadline(async () => {
            const described = await link.client.workflow.getHandle(workflowId).describe();
            return { described, live: await heartbeatProgress(link.client, described.raw.pendingActivities) };
          }),
        (seen) => {
          live = seen.live;
          view?.retries(activityRetries(seen.described.raw.pendingActivities));
        },
        RETRY_POLL_MS,
      )
    : () => undefined;
  const notice = (line: string) => process.stderr.write(`${view && onTerminal ? '\n' : ''}${verb}: ${line}\n`);
  let detach: (err: Error) => void = () => undefined;
  const detached = new Promise<never>((_, reject) => (detach = reject));
  const releaseInterrupt = onStopSignals(['SIGINT'], () => {
    view?.stop();
    view = undefined;
    if (request.onInterrupt === 'detach') {
      detach(
        new CliError(
          SapiErrorCode.CLI_INTERRUPTED,
          `stopped waiting; workflow ${workflowId} keeps running (re-attach with \`${reattachHint(workflowId)}\`)`,
          INTERRUPTED_EXIT_CODE,
        ),
      );
      return;
    }
    process.stderr.write(`${onTerminal ? '\n' : ''}${verb}: cancelling workflow ${workflowId} (Ctrl-C again to exit without waiting)\n`);
    const handle = link.client.workflow.getHandle(workflowId);
    // as `temporal workflow cancel` does it: the run ends *cancelled* (an extraction first loads what it staged)
    handle.cancel().catch((err: unknown) => notice(`could not send cancel to ${workflowId}: ${err instanceof Error ? err.message : String(err)}`));
  });
  try {
    const result = await Promise.race([
      link.retrying((client) => client.workflow.getHandle(workflowId, undefined, { firstExecutionRunId }).result() as Promise<object>, {
        timeoutMs: request.reconnectTimeoutMs,
        onUnreachable: () => notice(`Temporal unreachable, retrying… (workflow ${workflowId} keeps running on the server)`),
        onReconnected: (outageMs) => notice(`Temporal answers again after ${formatDuration(outageMs)}; following workflow ${workflowId}`),
      }),
      detached,
    ]);
    // the job succeeded if the workflow did (the last poll may have seen it still processing); sizes from the result
    view?.update(finalProgress(last, result));
    return result;
  } finally {
    stopPolling();
    stopRetryPolling();
    view?.stop();
    releaseInterrupt();
  }
}

/**
 * The error a following command ends with: the one-line failure (`import failed [TYPE] … (workflow …)`, exit 1),
 * or after losing Temporal a line that says the workflow may still be running and how to re-attach (exit 3).
 * `workflowId` is undefined when no workflow was started; `started` false when its start is in doubt.
 */
export function commandFailure(err: unknown, verb: string, address: string, workflowId?: string, started = true): CommandFailedError {
  if (err instanceof CommandFailedError) return err;
  const concerned = started ? workflowId : undefined;
  if (err instanceof TemporalLostError) {
    const where = `Temporal at ${address} unreachable for ${formatDuration(err.outageMs)} (--reconnect-timeout)`;
    const what = !workflowId
      ? 'nothing was started'
      : started
        ? `workflow ${workflowId} may still be running on the server: re-attach with \`${reattachHint(workflowId)}\` or \`sapi-temporal status ${workflowId}\``
        : `workflow ${workflowId} may have started: check with \`sapi-temporal status ${workflowId}\` before running it again`;
    return new CommandFailedError(`${verb} lost contact [${err.code}] ${where}; ${what}`, err.code, workflowId, { cause: err });
  }
  if (err instanceof CliError && err.exitCode === INTERRUPTED_EXIT_CODE)
    return new CommandFailedError(`${verb}: ${err.message}`, err.code, workflowId, { cause: err });
  return new CommandFailedError(describeFailure(err, verb, concerned), failureCode(err), concerned, { cause: err });
}

/** Prints a title and aligned `label  value` lines on stdout. */
export function printSummary(title: string, fields: Array<[string, string | number | undefined]>): void {
  const shown = fields.filter((field): field is [string, string | number] => field[1] !== undefined);
  const width = Math.max(0, ...shown.map(([label]) => label.length));
  process.stdout.write(`${title}\n${shown.map(([label, value]) => `  ${label.padEnd(width)}  ${value}\n`).join('')}`);
}
