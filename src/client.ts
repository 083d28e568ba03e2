// Typed starts of the plugin's workflows for a user's own client code: the input is checked by the compiler, the
// handle's result is typed, the run shows its summary and details in the Temporal UI, and a start under an id that
// is already running attaches to that run instead of failing (or starting a second transfer), and says so.
import { randomUUID } from 'node:crypto';
import { WithStartWorkflowOperation, type Client, type WorkflowExecutionDescription, type WorkflowHandleWithFirstExecutionRunId, type WorkflowStartOptions } from '@temporalio/client';
import { heartbeatProgress, withLive } from './cli/live-progress';
import type { RunProgress } from './cli/progress';
import { DEFAULT_TASK_QUEUE } from './config';
import type { ExtractProgress } from './contracts/extract';
import { runMetadata } from './contracts/search-attributes';
import type { TransferProgress } from './contracts/transfer';
import type { WorkflowInput, WorkflowName, WorkflowResult } from './contracts/workflows';

/** Start options of the typed helpers: the client's, with `taskQueue` (default `sapi-temporal`) and `workflowId` optional. */
export type SapiStartOptions = Partial<Omit<WorkflowStartOptions, 'args'>>;

/** A workflow handle whose `result()` is the workflow's typed result. */
export type SapiWorkflowHandle<W extends WorkflowName> = WorkflowHandleWithFirstExecutionRunId<(input: WorkflowInput<W>) => Promise<WorkflowResult<W>>>;

/** What the `progress` query and update of workflow `W` answer. */
export type WorkflowProgress<W extends WorkflowName> = W extends 'extractWorkflow' ? ExtractProgress : TransferProgress;

/** A started (or attached) run: its typed handle, whether a run was already going under the id, and where it is. */
export type SapiStartedWorkflow<W extends WorkflowName> = SapiWorkflowHandle<W> & {
  /** True when a run was already going under the given `workflowId` and this call attached to it; false when it started the run. */
  readonly attached: boolean;
  /**
   * Where the run is, as its `progress` update answered when this call reached it, with the step in flight (a
   * transfer's bytes, a batch's pages) from the pending activity's heartbeat. Only when a `workflowId` was given.
   */
  readonly progress?: WorkflowProgress<W>;
};

/**
 * Memo key of the random token each start-or-attach sends with its start request: the run's memo holds the token of
 * the request that started it, so a caller tells "I started it" from "I attached to it", even when two callers race.
 */
export const START_TOKEN_MEMO = 'sapiStartToken';

/**
 * Starts workflow `W` with a typed input.
 *
 * Without `workflowId`: a new id (`<verb>-<target>-<time><random>`), a plain start (`attached: false`, no `progress`).
 *
 * With one: start-or-attach. One Update-with-Start request (`USE_EXISTING`) starts the run, or, when a run is going
 * under that id, attaches to it instead of failing or starting a second transfer; the workflow's `progress` update
 * (it changes nothing) answers where the run is. So the call returns once a worker has taken the run's first task
 * (with no worker polling, it waits for one). A run of another workflow type under the id is an error.
 */
export async function startSapiWorkflow<W extends WorkflowName>(client: Client, workflowType: W, input: WorkflowInput<W>, options: SapiStartOptions = {}): Promise<SapiStartedWorkflow<W>> {
  type Workflow = (input: WorkflowInput<W>) => Promise<WorkflowResult<W>>;
  const { workflowId, taskQueue, ...rest } = options;
  const run = { workflowType, input } as Parameters<typeof runMetadata>[0];
  const start = { ...runMetadata(run, 'sapi-temporal client'), ...rest, taskQueue: taskQueue ?? DEFAULT_TASK_QUEUE, args: [input] as [WorkflowInput<W>] };
  if (workflowId === undefined) {
    const handle = await client.workflow.start<Workflow>(workflowType, { ...start, workflowId: generatedId(workflowType, input) });
    return Object.assign(handle, { attached: false });
  }
  const token = randomUUID();
  const operation = new WithStartWorkflowOperation<Workflow>(workflowType, {
    ...start,
    workflowId,
    workflowIdConflictPolicy: 'USE_EXISTING',
    memo: { ...rest.memo, [START_TOKEN_MEMO]: token },
  });
  const answered = await client.workflow.executeUpdateWithStart<Workflow, WorkflowProgress<W>, []>('progress', { startWorkflowOperation: operation });
  const described = await client.workflow.getHandle(workflowId).describe();
  if (described.type !== workflowType) {
    throw new Error(`workflow ${workflowId} is running, but it is a ${described.type}, not a ${workflowType}: choose another workflowId`);
  }
  // a handle like `start`'s: its result follows the run's chain from its first run (continue-as-new included)
  const firstExecutionRunId = described.raw.workflowExecutionInfo?.firstRunId || described.runId;
  const handle = client.workflow.getHandle<Workflow>(workflowId, undefined, { firstExecutionRunId });
  const progress = withLive(answered as RunProgress, await heartbeatProgress(client, described.raw.pendingActivities)) as WorkflowProgress<W>;
  return Object.assign(handle, { firstExecutionRunId, attached: !startedBy(described, token), progress });
}

/** True when `token` started the run (its memo holds the start request's token). */
function startedBy(described: WorkflowExecutionDescription, token: string): boolean {
  return described.memo?.[START_TOKEN_MEMO] === token;
}

/** Starts (or, with a `workflowId` of a running import, attaches to) `importTableWorkflow`. */
export const startImport = (client: Client, input: WorkflowInput<'importTableWorkflow'>, options?: SapiStartOptions) => startSapiWorkflow(client, 'importTableWorkflow', input, options);
/** Starts (or, with a `workflowId` of a running export, attaches to) `exportTableWorkflow`. */
export const startExport = (client: Client, input: WorkflowInput<'exportTableWorkflow'>, options?: SapiStartOptions) => startSapiWorkflow(client, 'exportTableWorkflow', input, options);
/** Starts (or, with a `workflowId` of a running extraction, attaches to) `extractWorkflow`. */
export const startExtract = (client: Client, input: WorkflowInput<'extractWorkflow'>, options?: SapiStartOptions) => startSapiWorkflow(client, 'extractWorkflow', input, options);

/** Runs `importTableWorkflow` to its end (attaching as {@link startImport} does) and resolves with its result (rejects with `WorkflowFailedError`). */
export const executeImport = async (client: Client, input: WorkflowInput<'importTableWorkflow'>, options?: SapiStartOptions) => (await startImport(client, input, options)).result();
/** Runs `exportTableWorkflow` to its end and resolves with its result. */
export const executeExport = async (client: Client, input: WorkflowInput<'exportTableWorkflow'>, options?: SapiStartOptions) => (await startExport(client, input, options)).result();
/** Runs `extractWorkflow` to its end and resolves with its result. */
export const executeExtract = async (client: Client, input: WorkflowInput<'extractWorkflow'>, options?: SapiStartOptions) => (await startExtract(client, input, options)).result();

function generatedId<W extends WorkflowName>(workflowType: W, input: WorkflowInput<W>): string {
  const i = input as Partial<WorkflowInput<'importTableWorkflow'> & WorkflowInput<'exportTableWorkflow'>>;
  const [verb, target] =
    workflowType === 'importTableWorkflow' ? ['import', `${i.bucketId}.${i.table}`] : workflowType === 'exportTableWorkflow' ? ['export', i.tableId] : ['extract', 'config'];
  return `${verb}-${target}-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
}
