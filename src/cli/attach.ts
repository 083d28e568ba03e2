// `status` and `wait`: picking up a workflow by id — one the CLI started and lost sight of (an outage, a closed
// terminal), or one a schedule started. `wait` follows it with the run commands' own loop and summary.
import { WorkflowNotFoundError, type Client, type WorkflowExecutionDescription } from '@temporalio/client';
import { progressQuery } from '../workflows';
import type { TransferProgress } from '../contracts/transfer';
import type { CliSettings, Summary } from './context';
import { summarizeExport } from './export';
import { summarizeExtract } from './extract';
import { summarizeBackfill } from './backfill';
import { CliError, rootFailure, type RootFailure } from './failure';
import { commandFailure, followAndPrint, printSummary, PROGRESS_QUERY_TIMEOUT_MS } from './follow';
import { summarizeImport } from './import';
import { activityRetries, formatDuration, formatRetry, progressFields, type ActivityRetry } from './progress';
import { heartbeatProgress, withLive } from '../live-progress';
import type { RetryWhileUnreachableOptions } from './reconnect';
import { TemporalLink } from './temporal-link';
import { noWorkerSeen, pollersOf, startWorkerHint } from './worker-check';
import { SapiErrorCode } from '../errors';

/** What the CLI knows about a workflow type: the command that runs it and how that command summarizes its result. */
interface WorkflowKind {
  verb: string;
  summarize(result: object, input: object): Summary;
}

/** The plugin's workflows the run commands start; others are followed too, with their result shown as JSON. */
const WORKFLOW_KINDS: Readonly<Record<string, WorkflowKind>> = Object.freeze({
  importTableWorkflow: { verb: 'import', summarize: (result, input) => summarizeImport(result as never, input) },
  exportTableWorkflow: { verb: 'export', summarize: (result, input) => summarizeExport(result as never, input) },
  extractWorkflow: { verb: 'extract', summarize: (result) => summarizeExtract(result as never) },
  backfillWorkflow: { verb: 'backfill', summarize: (result) => summarizeBackfill(result as never) },
});

/** The kind of `workflowType`: one of {@link WORKFLOW_KINDS}, else a generic one. */
function workflowKind(workflowType: string): WorkflowKind {
  return (
    WORKFLOW_KINDS[workflowType] ?? {
      verb: workflowType,
      summarize: (result) => ({ title: `${workflowType} completed`, fields: [['result', JSON.stringify(result)]] }),
    }
  );
}

/** Workflow statuses as the CLI prints them. */
const STATUS_NAMES: Readonly<Record<string, string>> = {
  RUNNING: 'running',
  COMPLETED: 'completed',
  FAILED: 'failed',
  CANCELLED: 'cancelled',
  TERMINATED: 'terminated',
  TIMED_OUT: 'timed out',
  CONTINUED_AS_NEW: 'continued as new',
};

/** `status` and `wait` as the commands describe them. */
interface AttachRequest {
  workflowId: string;
  settings: CliSettings;
  json: boolean;
  reconnectTimeoutMs: number;
}

/** `sapi-temporal status <workflowId>` as `--json` prints it. */
interface WorkflowStatus {
  workflowId: string;
  /** The chain's first run (what the run command printed) and its latest run. */
  firstRunId: string;
  runId: string;
  type: string;
  status: string;
  taskQueue: string;
  startTime: string;
  closeTime?: string;
  /** How long the run took, start to close (ms), once closed. */
  durationMs?: number;
  /** The `progress` query's answer while running. */
  progress?: TransferProgress;
  /** Why there is no progress while running (no worker answered, …). */
  progressError?: string;
  /** The calls Temporal is retrying while running (an outage being waited out): attempt, last failure, next attempt. */
  retrying?: ActivityRetry[];
  result?: object;
  failure?: RootFailure;
}

/** Prints what Temporal knows about the workflow: type, status, times, progress while running, result or failure when closed. */
export async function showStatus(request: AttachRequest): Promise<void> {
  const { link, described, retry } = await find('status', request);
  try {
    const status = await workflowStatus(link, described, retry);
    if (request.json) {
      process.stdout.write(`${JSON.stringify(status)}\n`);
      return;
    }
    const summary = status.result ? workflowKind(status.type).summarize(status.result, await workflowInput(link, status, retry)) : undefined;
    const failure = status.failure;
    printSummary(`workflow ${status.workflowId}: ${status.status}`, [
      ['type', status.type],
      ['status', status.status],
      ['task queue', status.taskQueue],
      ['started', status.startTime],
      ['closed', status.closeTime],
      ['duration', status.durationMs === undefined ? undefined : formatDuration(status.durationMs)],
      ['first run', status.firstRunId],
      ['run id', status.runId === status.firstRunId ? undefined : status.runId],
      ['progress', status.progress ? progressLine(status.progress) : status.progressError && `no answer (${status.progressError})`],
      ...(status.retrying ?? []).map((r): [string, string] => ['waiting', formatRetry(r)]),
      ['result', summary?.title],
      ...(summary?.fields ?? []),
      ['failure', failure && `[${failure.type}] ${failure.message}${failure.activity ? ` (activity ${failure.activity})` : ''}`],
    ]);
  } catch (err) {
    throw commandFailure(err, 'status', request.settings.address, request.workflowId);
  } finally {
    await link.close();
  }
}

/** Follows the workflow to its end like the command that started it, and prints the same summary or JSON. */
export async function waitFor(request: AttachRequest): Promise<void> {
  const { link, described, retry } = await find('wait', request);
  const kind = workflowKind(described.type);
  try {
    const firstExecutionRunId = firstRunIdOf(described);
    const input = await workflowInput(link, { workflowId: request.workflowId, firstRunId: firstExecutionRunId }, retry);
    if (described.status.name === 'RUNNING') await noteMissingWorker(link, kind.verb, { ...request.settings, taskQueue: described.taskQueue });
    await followAndPrint(link, {
      verb: kind.verb,
      workflowId: request.workflowId,
      firstExecutionRunId,
      json: request.json,
      reconnectTimeoutMs: request.reconnectTimeoutMs,
      onInterrupt: 'detach',
      startedAt: described.startTime.getTime(),
      summarize: (result) => kind.summarize(result, input),
    });
  } catch (err) {
    throw commandFailure(err, kind.verb, request.settings.address, request.workflowId);
  } finally {
    await link.close();
  }
}

/**
 * Says so on stderr when no worker polls the running workflow's task queue: it cannot end until one does. Only a
 * note (the workflow exists; a worker may be on its way); a failed look is not worth failing `wait` for.
 */
async function noteMissingWorker(link: TemporalLink, verb: string, settings: CliSettings): Promise<void> {
  const queue = { name: settings.taskQueue, kind: 'workflow' as const };
  const pollers = await pollersOf(link.client, settings.namespace, queue).catch(() => undefined);
  if (pollers?.length === 0)
    process.stderr.write(`${verb}: note: ${noWorkerSeen(settings, queue)}; the workflow waits until one does: ${startWorkerHint(settings, queue)}\n`);
}

/** Connects and finds the workflow (through outages); an unknown id is a clear one-line failure. */
async function find(
  what: string,
  request: AttachRequest,
): Promise<{ link: TemporalLink; described: WorkflowExecutionDescription; retry: RetryWhileUnreachableOptions }> {
  const retry: RetryWhileUnreachableOptions = {
    timeoutMs: request.reconnectTimeoutMs,
    onUnreachable: () => process.stderr.write(`${what}: Temporal unreachable, retrying… (workflow ${request.workflowId} keeps running on the server)\n`),
  };
  let link: TemporalLink | undefined;
  try {
    link = await TemporalLink.open(request.settings);
    const described = await link.retrying((client) => client.workflow.getHandle(request.workflowId).describe(), retry);
    return { link, described, retry };
  } catch (err) {
    await link?.close();
    const notFound = err instanceof WorkflowNotFoundError;
    const failure = notFound
      ? new CliError(
          SapiErrorCode.CLI_WORKFLOW_NOT_FOUND,
          `no workflow ${request.workflowId} in namespace ${request.settings.namespace} at ${request.settings.address} (use the id the run command printed: "started workflow <id>")`,
        )
      : err;
    throw commandFailure(failure, what, request.settings.address, notFound ? undefined : request.workflowId);
  }
}

/** The status of the workflow's latest run, with its progress (running) or its result or failure (closed). */
async function workflowStatus(link: TemporalLink, described: WorkflowExecutionDescription, retry: RetryWhileUnreachableOptions): Promise<WorkflowStatus> {
  const status: WorkflowStatus = {
    workflowId: described.workflowId,
    firstRunId: firstRunIdOf(described),
    runId: described.runId,
    type: described.type,
    status: STATUS_NAMES[described.status.name] ?? described.status.name.toLowerCase(),
    taskQueue: described.taskQueue,
    startTime: described.startTime.toISOString(),
    closeTime: described.closeTime?.toISOString(),
    durationMs: described.closeTime ? described.closeTime.getTime() - described.startTime.getTime() : undefined,
  };
  if (described.status.name === 'RUNNING') {
    const retrying = activityRetries(described.raw.pendingActivities);
    if (retrying.length > 0) status.retrying = retrying;
    try {
      const progress = await link.client.withDeadline(Date.now() + PROGRESS_QUERY_TIMEOUT_MS, () =>
        link.client.workflow.getHandle(described.workflowId, described.runId).query(progressQuery),
      );
      status.progress = withLive(progress, await heartbeatProgress(link.client, described.raw.pendingActivities));
    } catch (err) {
      status.progressError = err instanceof Error ? err.message : String(err);
    }
    return status;
  }
  try {
    status.result = (await link.retrying((client: Client) => client.workflow.getHandle(described.workflowId, described.runId).result(), retry)) as object;
  } catch (err) {
    if (err instanceof CliError) throw err;
    status.failure = rootFailure(err);
  }
  return status;
}

/** The input the chain's first run was started with (the run commands' summaries use it), as the start event holds it. */
async function workflowInput(link: TemporalLink, run: { workflowId: string; firstRunId: string }, retry: RetryWhileUnreachableOptions): Promise<object> {
  const { history } = await link.retrying(
    (client) =>
      client.workflowService.getWorkflowExecutionHistory({
        namespace: client.options.namespace,
        execution: { workflowId: run.workflowId, runId: run.firstRunId },
        maximumPageSize: 1,
      }),
    retry,
  );
  const payload = history?.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  if (!payload) return {};
  const input: unknown = link.client.options.loadedDataConverter.payloadConverter.fromPayload(payload);
  return typeof input === 'object' && input !== null ? input : {};
}

function firstRunIdOf(described: WorkflowExecutionDescription): string {
  return described.raw.workflowExecutionInfo?.firstRunId || described.runId;
}

function progressLine(progress: TransferProgress): string {
  const { phase, transferred, job } = progressFields(progress);
  return [phase, transferred, job].filter(Boolean).join(', ');
}
