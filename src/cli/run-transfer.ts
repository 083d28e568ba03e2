// Runs one transfer workflow for a command: start it, show its progress, cancel it on Ctrl-C, print its result.
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { cancelSignal, progressQuery } from '../workflows';
import type { TransferProgress } from '../workflows/types';
import { onStopSignals, type CliSettings } from './common';
import { describeFailure } from './failure';
import { formatDuration, pollProgress, progressBar, type ProgressView } from './progress';

/** Longest wait for one progress query (ms); a slow answer is skipped, the next poll asks again. */
export const PROGRESS_QUERY_TIMEOUT_MS = 5_000;

/** One workflow run as a command describes it. */
export interface TransferRun<I, R extends object> {
  /** `import` or `export`: names the run in messages. */
  verb: string;
  /** Registered workflow name, e.g. `importTableWorkflow`. */
  workflowType: string;
  workflowId: string;
  input: I;
  settings: CliSettings;
  /** Print exactly one JSON object `{workflowId, runId, ...result}` on stdout, no summary and no progress bar. */
  json: boolean;
  /** The human summary: a title line and labelled values (undefined values are left out). */
  summarize(result: R): { title: string; fields: Array<[label: string, value: string | number | undefined]> };
}

/** {@link runTransfer}'s shape, so tests can put a recorder in its place. */
export type TransferRunner = <I, R extends object>(run: TransferRun<I, R>) => Promise<void>;

/** An error the CLI raises itself; `code` is the failure type on the stderr line. */
export class CliError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/**
 * Starts the workflow, waits for its result while a progress bar (stderr, TTY only, not with `json`) follows the
 * `progress` query, and prints the result. The first Ctrl-C sends the workflow's `cancel` signal and keeps waiting
 * for it to end; the second exits at once. Any failure is rethrown as one line: `<verb> failed [TYPE] cause (…)`.
 */
export async function runTransfer<I, R extends object>(run: TransferRun<I, R>): Promise<void> {
  const startedAt = Date.now();
  let connection: Connection | undefined;
  let started = false;
  try {
    connection = await connectTemporal(run.settings);
    const client = new Client({ connection, namespace: run.settings.namespace });
    const handle = await client.workflow.start(run.workflowType, {
      taskQueue: run.settings.taskQueue,
      workflowId: run.workflowId,
      args: [run.input],
    });
    started = true;
    const result = (await follow(client, handle, run)) as R;
    const runId = handle.firstExecutionRunId;
    if (run.json) {
      process.stdout.write(`${JSON.stringify({ workflowId: handle.workflowId, runId, ...result })}\n`);
      return;
    }
    const { title, fields } = run.summarize(result);
    printSummary(title, [...fields, ['workflow', handle.workflowId], ['run id', runId], ['duration', formatDuration(Date.now() - startedAt)]]);
  } catch (err) {
    throw new Error(describeFailure(err, run.verb, started ? run.workflowId : undefined), { cause: err });
  } finally {
    await connection?.close().catch(() => undefined);
  }
}

/** Connects to Temporal; an unreachable server is a one-line CLI error that says how to point at one. */
export async function connectTemporal(settings: CliSettings): Promise<Connection> {
  try {
    return await Connection.connect({ address: settings.address });
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new CliError('TEMPORAL_UNREACHABLE', `cannot reach Temporal at ${settings.address}: ${reason} (set TEMPORAL_ADDRESS or --address; \`sapi-temporal dev\` runs a local server)`);
  }
}

/** Waits for the result with the progress bar and the Ctrl-C handler in place, and removes both afterwards. */
async function follow(client: Client, handle: WorkflowHandle, run: TransferRun<unknown, object>): Promise<unknown> {
  let view: ProgressView | undefined = !run.json && process.stderr.isTTY ? progressBar(process.stderr, run.verb) : undefined;
  let last: TransferProgress = { phase: 'starting', bytes: 0 };
  const stopPolling = view
    ? pollProgress(
        () => client.withDeadline(Date.now() + PROGRESS_QUERY_TIMEOUT_MS, () => handle.query(progressQuery)),
        (progress) => view?.update((last = progress)),
      )
    : () => undefined;
  const releaseInterrupt = onStopSignals(['SIGINT'], () => {
    view?.stop();
    view = undefined;
    process.stderr.write(`\n${run.verb}: cancelling workflow ${handle.workflowId} (Ctrl-C again to exit without waiting)\n`);
    handle.signal(cancelSignal, 'cancelled from the CLI (Ctrl-C)').catch((err: unknown) => {
      process.stderr.write(`${run.verb}: could not send cancel to ${handle.workflowId}: ${err instanceof Error ? err.message : String(err)}\n`);
    });
  });
  try {
    const result = await handle.result();
    // the job succeeded if the workflow did; the last poll may have seen it still processing
    view?.update({ ...last, phase: 'done', jobStatus: last.jobId === undefined ? undefined : 'success' });
    return result;
  } finally {
    stopPolling();
    view?.stop();
    releaseInterrupt();
  }
}

/** Prints a title and aligned `label  value` lines on stdout. */
export function printSummary(title: string, fields: Array<[string, string | number | undefined]>): void {
  const shown = fields.filter((field): field is [string, string | number] => field[1] !== undefined);
  const width = Math.max(0, ...shown.map(([label]) => label.length));
  process.stdout.write(`${title}\n${shown.map(([label, value]) => `  ${label.padEnd(width)}  ${value}\n`).join('')}`);
}
