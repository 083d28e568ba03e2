// Runs one transfer workflow for a command: start it, say its id (to re-attach), follow it to its end, print its result.
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { WorkflowInput, WorkflowName, WorkflowResult } from '../contracts/workflows';
import type { CliSettings } from './common';
import { commandFailure, followAndPrint, reattachHint, type Summary } from './follow';
import { isTemporalUnreachable } from './reconnect';
import { TemporalLink } from './temporal-link';

/** Also importable from here, where it used to live (`emulator.ts` does). */
export { CliError } from './failure';

/** One workflow run as a command describes it: a registered workflow and its typed input. */
export interface TransferRun<W extends WorkflowName = WorkflowName> {
  /** `import` or `export`: names the run in messages. */
  verb: string;
  /** Registered workflow name, e.g. `importTableWorkflow`. */
  workflowType: W;
  workflowId: string;
  input: WorkflowInput<W>;
  settings: CliSettings;
  /** Print exactly one JSON object `{workflowId, runId, ...result}` on stdout, no summary and no progress bar. */
  json: boolean;
  /** Keep following through a Temporal outage this long before giving up with exit code 3 (ms). */
  reconnectTimeoutMs: number;
  /** The human summary: a title line and labelled values (undefined values are left out). */
  summarize(result: WorkflowResult<W>): Summary;
}

/** {@link runTransfer}'s shape, so tests can put a recorder in its place. */
export type TransferRunner = <W extends WorkflowName>(run: TransferRun<W>) => Promise<void>;

/**
 * Starts the workflow, prints its id on stderr (with how to re-attach), then follows it ({@link followAndPrint}):
 * progress bar, Ctrl-C cancels, Temporal outages ridden out. A failure is rethrown as one line:
 * `<verb> failed [TYPE] cause (…)`; losing Temporal for good as `<verb> lost contact […]` (exit code 3).
 */
export async function runTransfer<W extends WorkflowName>(run: TransferRun<W>): Promise<void> {
  const startedAt = Date.now();
  let link: TemporalLink | undefined;
  let startAttempted = false;
  let firstExecutionRunId: string | undefined;
  try {
    link = await TemporalLink.open(run.settings);
    startAttempted = true;
    firstExecutionRunId = await startWorkflow(link, run);
    process.stderr.write(`${run.verb}: started workflow ${run.workflowId} (run ${firstExecutionRunId}); to re-attach: ${reattachHint(run.workflowId)}\n`);
    await followAndPrint(link, {
      verb: run.verb,
      workflowId: run.workflowId,
      firstExecutionRunId,
      json: run.json,
      reconnectTimeoutMs: run.reconnectTimeoutMs,
      onInterrupt: 'cancel',
      startedAt,
      summarize: (result) => run.summarize(result as WorkflowResult<W>),
    });
  } catch (err) {
    throw commandFailure(err, run.verb, run.settings.address, startAttempted ? run.workflowId : undefined, firstExecutionRunId !== undefined);
  } finally {
    await link?.close();
  }
}

/**
 * Starts the workflow and resolves with its run id, through Temporal outages. A start that failed for want of an
 * answer may still have reached the server: if the next attempt finds the workflow already running, that is ours.
 */
async function startWorkflow<W extends WorkflowName>(link: TemporalLink, run: TransferRun<W>): Promise<string> {
  let inDoubt = false;
  const start = async (client: Client): Promise<string> => {
    try {
      const handle = await client.workflow.start(run.workflowType, { taskQueue: run.settings.taskQueue, workflowId: run.workflowId, args: [run.input] });
      return handle.firstExecutionRunId;
    } catch (err) {
      if (inDoubt && err instanceof WorkflowExecutionAlreadyStartedError) {
        const described = await client.workflow.getHandle(run.workflowId).describe();
        return described.raw.workflowExecutionInfo?.firstRunId || described.runId;
      }
      inDoubt ||= isTemporalUnreachable(err);
      throw err;
    }
  };
  return link.retrying(start, {
    timeoutMs: run.reconnectTimeoutMs,
    onUnreachable: () => process.stderr.write(`${run.verb}: Temporal unreachable while starting workflow ${run.workflowId}, retrying…\n`),
  });
}
