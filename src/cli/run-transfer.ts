// Runs one transfer workflow for a command: make sure a worker will pick it up, start it, say its id (to re-attach),
// then either return at once (`--detach`) or follow it to its end and print its result.
import { isGrpcServiceError, type Client } from '@temporalio/client';
import { inContext, SapiInvalidInputError } from '../errors';
import { randomUUID } from 'node:crypto';
import { statSync } from 'node:fs';
import { hostname, userInfo } from 'node:os';
import type { WorkflowName, WorkflowResult } from '../contracts/workflows';
import { runMetadata } from '../contracts/search-attributes';
import { startOrAttach } from '../client';
import type { TransferRun } from './context';
import { commandFailure, followAndPrint, reattachHint } from './follow';
import { type RetryWhileUnreachableOptions } from './reconnect';
import { TemporalLink } from './temporal-link';
import { noWorkerSeen, pollersOf, startWorkerHint, requireWorkers, WORKER_WAIT_MS, type NeededQueue } from './worker-check';

/**
 * Checks that a worker polls the task queue (and `transferTaskQueue`) lately, and starts nothing when none shows up
 * within {@link WORKER_WAIT_MS}: a workflow nobody picks up would leave the command waiting silently. Then starts
 * the workflow and prints its id on stderr (with how to re-attach). With `detach` it prints the id on stdout and
 * returns (no worker check: the workflow may wait for a worker; a missing one is only noted); else it follows the
 * workflow ({@link followAndPrint}): progress bar or plain lines, retries shown, Ctrl-C detaches (or cancels),
 * Temporal outages ridden out. A failure is rethrown as one line: `<verb> failed [TYPE] cause (…)`; losing Temporal
 * for good as `<verb> lost contact […]` (exit code 3).
 */
export async function runTransfer<W extends WorkflowName>(run: TransferRun<W>): Promise<void> {
  const startedAt = Date.now();
  let link: TemporalLink | undefined;
  let startAttempted = false;
  let firstExecutionRunId: string | undefined;
  try {
    link = await TemporalLink.open(run.settings);
    await checkWorkers(link, run);
    startAttempted = true;
    const started = await startWorkflow(link, run);
    firstExecutionRunId = started.runId;
    process.stderr.write(
      started.alreadyDone
        ? `${run.verb}: already done: workflow ${run.workflowId} (run ${firstExecutionRunId}) completed before; nothing was run again (run it again with --rerun)\n`
        : `${run.verb}: ${started.attached ? 'attached to running' : 'started'} workflow ${run.workflowId} (run ${firstExecutionRunId}); to re-attach: ${reattachHint(run.workflowId)}\n`,
    );
    if (run.detach) {
      const started = { workflowId: run.workflowId, runId: firstExecutionRunId, taskQueue: run.settings.taskQueue };
      process.stdout.write(run.json ? `${JSON.stringify(started)}\n` : `${run.workflowId}\n`);
      return;
    }
    await followAndPrint(link, {
      verb: run.verb,
      workflowId: run.workflowId,
      firstExecutionRunId,
      json: run.json,
      reconnectTimeoutMs: run.reconnectTimeoutMs,
      onInterrupt: run.onInterrupt ?? 'detach',
      startedAt,
      totalBytes: uploadSize(run),
      summarize: (result) => run.summarize(result as WorkflowResult<W>),
    });
  } catch (err) {
    throw commandFailure(err, run.verb, run.settings.address, startAttempted ? run.workflowId : undefined, firstExecutionRunId !== undefined);
  } finally {
    await link?.close();
  }
}

/** The queues the run needs a worker on: the workflow's, and the transfer's when it runs elsewhere. */
export function neededQueues(run: Pick<TransferRun, 'settings' | 'input'>): NeededQueue[] {
  const queues: NeededQueue[] = [{ name: run.settings.taskQueue, kind: 'workflow' }];
  const transfer = (run.input as { transferTaskQueue?: string }).transferTaskQueue;
  if (transfer !== undefined && transfer !== run.settings.taskQueue) queues.push({ name: transfer, kind: 'activity' });
  return queues;
}

/** gRPC codes of a server that will not describe task queues to us: the check is skipped, not the run. */
const GRPC_PERMISSION_DENIED = 7;
const GRPC_UNIMPLEMENTED = 12;

/**
 * Before starting: fails (`SAPI_CLI_NO_WORKER`) when no worker polls a needed queue; with `detach` only notes it.
 * A server that refuses to describe task queues (permission, old version) skips the check with a note.
 */
async function checkWorkers<W extends WorkflowName>(link: TemporalLink, run: TransferRun<W>): Promise<void> {
  if (run.checkWorkers === false) return;
  const queues = neededQueues(run);
  const retry: RetryWhileUnreachableOptions = {
    timeoutMs: run.reconnectTimeoutMs,
    onUnreachable: () => process.stderr.write(`${run.verb}: Temporal unreachable while looking for a worker, retrying…\n`),
  };
  try {
    if (run.detach) {
      for (const queue of queues) {
        const pollers = await link.retrying((client) => pollersOf(client, run.settings.namespace, queue), retry);
        if (pollers.length === 0)
          process.stderr.write(
            `${run.verb}: note: ${noWorkerSeen(run.settings, queue)}; the workflow waits until one does: ${startWorkerHint(run.settings, queue)}\n`,
          );
      }
      return;
    }
    await link.retrying(
      (client) =>
        requireWorkers(client, run.settings, queues, {
          onWaiting: (queue) =>
            process.stderr.write(`${run.verb}: no worker polls task queue ${queue.name} yet; waiting up to ${WORKER_WAIT_MS / 1000} s for one…\n`),
        }),
      retry,
    );
  } catch (err) {
    if (!isGrpcServiceError(err) || (err.code !== GRPC_PERMISSION_DENIED && err.code !== GRPC_UNIMPLEMENTED)) throw err;
    process.stderr.write(`${run.verb}: could not check for workers on task queue ${run.settings.taskQueue} (${err.message}); starting anyway\n`);
  }
}

/**
 * Starts the workflow (or attaches to it) through the typed client's {@link startOrAttach}, through Temporal outages:
 * one token for every attempt, so a start that failed for want of an answer but reached the server is recognised as
 * ours by the next attempt. A run going under the id is followed instead of starting a second one (two commands
 * racing to start it follow the one run); a completed last run under it is not run again unless `--rerun`.
 */
async function startWorkflow<W extends WorkflowName>(
  link: TemporalLink,
  run: TransferRun<W>,
): Promise<{ runId: string; attached: boolean; alreadyDone: boolean }> {
  const token = randomUUID();
  const start = async (client: Client): Promise<{ runId: string; attached: boolean; alreadyDone: boolean }> => {
    const outcome = await startOrAttach(client, run.workflowType, run.input, {
      taskQueue: run.settings.taskQueue,
      workflowId: run.workflowId,
      token,
      rerun: run.rerun ?? false,
      ...(run.priority ? { priority: run.priority } : {}),
      ...startMetadata(run),
    });
    return { runId: outcome.firstExecutionRunId, attached: outcome.attached, alreadyDone: outcome.alreadyDone };
  };
  try {
    return await link.retrying(start, {
      timeoutMs: run.reconnectTimeoutMs,
      onUnreachable: () => process.stderr.write(`${run.verb}: Temporal unreachable while starting workflow ${run.workflowId}, retrying…\n`),
    });
  } catch (err) {
    if (err instanceof SapiInvalidInputError) throw inContext(err, err.message.replace(/choose another workflow id$/, 'choose another --workflow-id'));
    throw err;
  }
}

/**
 * The bytes an import will upload when the CLI can tell: a local file it can see, sent as is (`--gzip` compresses
 * it on the way, to a size unknown in advance). Undefined otherwise.
 */
function uploadSize(run: Pick<TransferRun, 'workflowType' | 'input'>): number | undefined {
  const { source, gzip } = run.input as { source?: unknown; gzip?: boolean };
  if (run.workflowType !== 'importTableWorkflow' || gzip || typeof source !== 'string' || !source.startsWith('/')) return undefined;
  try {
    return statSync(source).size;
  } catch {
    return undefined; // on the worker's host only
  }
}

/**
 * What the Temporal UI shows of a run the CLI starts: `import orders.csv → in.c-main.orders (direct, 3.1 GB)` (the
 * size when the source is a file the CLI can see) and the details of the command line.
 */
function startMetadata(run: Pick<TransferRun, 'workflowType' | 'input'>): { staticSummary: string; staticDetails: string } {
  let sizeBytes: number | undefined;
  const source = (run.input as { source?: unknown }).source;
  if (run.workflowType === 'importTableWorkflow' && typeof source === 'string' && source.startsWith('/')) {
    try {
      sizeBytes = statSync(source).size;
    } catch {
      // on the worker's host only: no size
    }
  }
  let who: string | undefined;
  try {
    who = `sapi-temporal CLI (${userInfo().username}@${hostname()})`;
  } catch {
    who = 'sapi-temporal CLI';
  }
  return runMetadata({ workflowType: run.workflowType, input: run.input, sizeBytes } as Parameters<typeof runMetadata>[0], who);
}
