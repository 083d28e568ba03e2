// Typed starts of the plugin's workflows for a user's own client code: the input is checked by the compiler, the
// handle's result is typed, the run shows its summary and details in the Temporal UI, and a start under an id that
// is already running attaches to that run instead of failing (or starting a second transfer), and says so; a start
// under the id of a run that completed does not run it again (unless `rerun`), and says so.
import { randomUUID } from 'node:crypto';
import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  type Client,
  type WorkflowExecutionDescription,
  type WorkflowHandleWithFirstExecutionRunId,
  type WorkflowStartOptions,
} from '@temporalio/client';
import { heartbeatProgress, withLive, type RunProgress } from './live-progress';
import { DEFAULT_TASK_QUEUE } from './config';
import type { BackfillProgress } from './contracts/backfill';
import type { ExtractProgress } from './contracts/extract';
import { runMetadata } from './contracts/search-attributes';
import type { TransferProgress } from './contracts/transfer';
import type { WorkflowInput, WorkflowName, WorkflowResult } from './contracts/workflows';
import { SapiInvalidInputError } from './errors';

/**
 * Start options of the typed helpers: the client's, with `taskQueue` (default `sapi-temporal`) and `workflowId`
 * optional, and `rerun`.
 */
export type SapiStartOptions = Partial<Omit<WorkflowStartOptions, 'args'>> & {
  /**
   * Run again under a `workflowId` whose last run completed. Default false: such a start runs nothing and answers the
   * completed run (`alreadyDone`), so a rerun under a fixed id never loads twice. A run that failed, was cancelled,
   * terminated or timed out is always run again. (A `workflowIdReusePolicy` given here wins over both.)
   */
  rerun?: boolean;
};

/** A workflow handle whose `result()` is the workflow's typed result. */
export type SapiWorkflowHandle<W extends WorkflowName> = WorkflowHandleWithFirstExecutionRunId<(input: WorkflowInput<W>) => Promise<WorkflowResult<W>>>;

/** What the `progress` query and update of workflow `W` answer. */
export type WorkflowProgress<W extends WorkflowName> = W extends 'extractWorkflow'
  ? ExtractProgress
  : W extends 'backfillWorkflow'
    ? BackfillProgress
    : TransferProgress;

/** A started (or attached) run: its typed handle, whether a run was already going under the id, and where it is. */
export type SapiStartedWorkflow<W extends WorkflowName> = SapiWorkflowHandle<W> & {
  /**
   * True when this call started nothing: a run was already going under the given `workflowId` and this call attached
   * to it, or (`alreadyDone`) the last run under it had completed. False when it started the run.
   */
  readonly attached: boolean;
  /**
   * True when the last run under the given `workflowId` had completed and nothing was run again (see
   * `rerun` in {@link SapiStartOptions}): `result()` answers that run's result.
   */
  readonly alreadyDone: boolean;
  /**
   * Where the run is, as its `progress` update answered when this call reached it, with the step in flight (a
   * transfer's bytes, a batch's pages) from the pending activity's heartbeat. Only when a `workflowId` was given and
   * the run was still going.
   */
  readonly progress?: WorkflowProgress<W>;
};

/**
 * Memo key of the random token each start-or-attach sends with its start request: the run's memo holds the token of
 * the request that started it, so a caller tells "I started it" from "I attached to it", even when two callers race.
 */
export const START_TOKEN_MEMO = 'sapiStartToken';

/** Options of {@link startOrAttach}: the start options with the workflow id and task queue settled. */
export type StartOrAttachOptions = Omit<SapiStartOptions, 'workflowId' | 'taskQueue'> & {
  workflowId: string;
  taskQueue: string;
  /**
   * The token recorded in the run's memo (see {@link START_TOKEN_MEMO}). Pass the same one to every retry of one
   * start (e.g. after Temporal was unreachable): a retry that finds the run an earlier attempt started says it
   * started it. Default: a new one.
   */
  token?: string;
};

/** What {@link startOrAttach} found or did. */
export interface StartOrAttachOutcome {
  /** The run's first run id (its chain, continue-as-new included, starts there). */
  firstExecutionRunId: string;
  /** True when this call started nothing (a run was going, or had completed: `alreadyDone`). */
  attached: boolean;
  /** True when the last run under the id had completed and nothing was run again. */
  alreadyDone: boolean;
  /** The run as described after the start. */
  described: WorkflowExecutionDescription;
}

/**
 * The one start-or-attach of the package (the typed helpers and the CLI use it). One start request under
 * `workflowId` with `workflowIdConflictPolicy: USE_EXISTING` (a run going under the id is attached to, never a
 * second one started, even when two callers race) and `workflowIdReusePolicy: ALLOW_DUPLICATE_FAILED_ONLY` (a
 * completed last run is not run again; with `rerun`: `ALLOW_DUPLICATE`, it is). The run's memo holds the token of
 * the request that started it, which tells "started" from "attached". A run of another workflow type under the id
 * is refused (`SAPI_INVALID_INPUT`). Needs no worker: nothing here waits for the run to make progress.
 */
export async function startOrAttach<W extends WorkflowName>(
  client: Client,
  workflowType: W,
  input: WorkflowInput<W>,
  options: StartOrAttachOptions,
): Promise<StartOrAttachOutcome> {
  const { workflowId, token = randomUUID(), rerun, ...rest } = options;
  const reusePolicy = rest.workflowIdReusePolicy ?? (rerun ? 'ALLOW_DUPLICATE' : 'ALLOW_DUPLICATE_FAILED_ONLY');
  try {
    const handle = await client.workflow.start(workflowType, {
      ...rest,
      workflowId,
      args: [input],
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowIdReusePolicy: reusePolicy,
      memo: { ...rest.memo, [START_TOKEN_MEMO]: token },
    });
    const described = await handle.describe();
    requireType(described, workflowType, workflowId);
    const firstExecutionRunId = described.raw.workflowExecutionInfo?.firstRunId || handle.firstExecutionRunId;
    return { firstExecutionRunId, attached: described.memo?.[START_TOKEN_MEMO] !== token, alreadyDone: false, described };
  } catch (err) {
    // the reuse policy refused a new run: the last run under the id is closed in a way the policy keeps
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    let described: WorkflowExecutionDescription;
    try {
      described = await client.workflow.getHandle(workflowId).describe();
    } catch (notFound) {
      if (notFound instanceof WorkflowNotFoundError) throw err;
      throw notFound;
    }
    requireType(described, workflowType, workflowId);
    if (described.status.name !== 'COMPLETED') throw err; // e.g. a workflowIdReusePolicy of the caller's (REJECT_DUPLICATE)
    const firstExecutionRunId = described.raw.workflowExecutionInfo?.firstRunId || described.runId;
    return { firstExecutionRunId, attached: true, alreadyDone: true, described };
  }
}

function requireType(described: WorkflowExecutionDescription, workflowType: WorkflowName, workflowId: string): void {
  if (described.type === workflowType) return;
  const state = described.status.name === 'RUNNING' ? 'is running' : `ran (${described.status.name.toLowerCase()})`;
  throw new SapiInvalidInputError(`workflow ${workflowId} ${state}, but it is a ${described.type}, not a ${workflowType}: choose another workflow id`, {
    workflowId,
  });
}

/**
 * Starts workflow `W` with a typed input.
 *
 * Without `workflowId`: a new id (`<verb>-<target>-<time><random>`), a plain start (`attached: false`, no `progress`).
 *
 * With one: start-or-attach (one start request with `workflowIdConflictPolicy: USE_EXISTING` and
 * `workflowIdReusePolicy: ALLOW_DUPLICATE_FAILED_ONLY`, `ALLOW_DUPLICATE` with `rerun`). A run going under that id is attached to instead of failing or starting a second
 * transfer, and its `progress` update (it changes nothing) answers where it is, so the call returns once a worker has
 * taken the run's task (with no worker polling, it waits for one). When the last run under the id completed, nothing
 * runs again (`alreadyDone`, `result()` answers that run's result) unless `rerun` is set: a rerun under a fixed id is
 * safe. A run of another workflow type under the id is an error.
 */
export async function startSapiWorkflow<W extends WorkflowName>(
  client: Client,
  workflowType: W,
  input: WorkflowInput<W>,
  options: SapiStartOptions = {},
): Promise<SapiStartedWorkflow<W>> {
  type Workflow = (input: WorkflowInput<W>) => Promise<WorkflowResult<W>>;
  const { workflowId, taskQueue, rerun, ...rest } = options;
  const run = { workflowType, input } as Parameters<typeof runMetadata>[0];
  const start = { ...runMetadata(run, 'sapi-temporal client'), ...rest, taskQueue: taskQueue ?? DEFAULT_TASK_QUEUE };
  if (workflowId === undefined) {
    const handle = await client.workflow.start<Workflow>(workflowType, {
      ...start,
      args: [input] as [WorkflowInput<W>],
      workflowId: generatedId(workflowType, input),
    });
    return Object.assign(handle, { attached: false, alreadyDone: false });
  }
  const outcome = await startOrAttach(client, workflowType, input, { ...start, workflowId, rerun });
  // a handle like `start`'s: its result follows the run's chain from its first run (continue-as-new included)
  const { firstExecutionRunId, attached, alreadyDone } = outcome;
  const handle = client.workflow.getHandle<Workflow>(workflowId, undefined, { firstExecutionRunId });
  if (alreadyDone) return Object.assign(handle, { firstExecutionRunId, attached, alreadyDone });
  const answered = await handle.executeUpdate<WorkflowProgress<W>, []>('progress').catch(async (err: unknown) => {
    // the run ended between the start and the update (a run attached to in its last moments): no progress to tell
    if ((await handle.describe()).status.name !== 'RUNNING') return undefined;
    throw err;
  });
  if (answered === undefined) return Object.assign(handle, { firstExecutionRunId, attached, alreadyDone });
  const progress = withLive(answered as RunProgress, await heartbeatProgress(client, (await handle.describe()).raw.pendingActivities)) as WorkflowProgress<W>;
  return Object.assign(handle, { firstExecutionRunId, attached, alreadyDone, progress });
}

/** Starts (or, with a `workflowId` of a running import, attaches to) `importTableWorkflow`. */
export const startImport = (client: Client, input: WorkflowInput<'importTableWorkflow'>, options?: SapiStartOptions) =>
  startSapiWorkflow(client, 'importTableWorkflow', input, options);
/** Starts (or, with a `workflowId` of a running export, attaches to) `exportTableWorkflow`. */
export const startExport = (client: Client, input: WorkflowInput<'exportTableWorkflow'>, options?: SapiStartOptions) =>
  startSapiWorkflow(client, 'exportTableWorkflow', input, options);
/** Starts (or, with a `workflowId` of a running extraction, attaches to) `extractWorkflow`. */
export const startExtract = (client: Client, input: WorkflowInput<'extractWorkflow'>, options?: SapiStartOptions) =>
  startSapiWorkflow(client, 'extractWorkflow', input, options);

/**
 * Runs `importTableWorkflow` to its end (attaching as {@link startImport} does) and resolves with its result (rejects
 * with `WorkflowFailedError`). Under the `workflowId` of a completed run it resolves with that run's result and loads
 * nothing again (pass `rerun: true` to load again).
 */
export const executeImport = async (client: Client, input: WorkflowInput<'importTableWorkflow'>, options?: SapiStartOptions) =>
  (await startImport(client, input, options)).result();
/** Runs `exportTableWorkflow` to its end and resolves with its result. */
export const executeExport = async (client: Client, input: WorkflowInput<'exportTableWorkflow'>, options?: SapiStartOptions) =>
  (await startExport(client, input, options)).result();
/** Runs `extractWorkflow` to its end and resolves with its result. */
export const executeExtract = async (client: Client, input: WorkflowInput<'extractWorkflow'>, options?: SapiStartOptions) =>
  (await startExtract(client, input, options)).result();
/**
 * Starts (or, with the `workflowId` of a running backfill, attaches to) `backfillWorkflow`: an extraction over date
 * windows or imports over a list of sources, as a sliding window of child runs. Give a `workflowId`: run again under
 * the same id after a failure, the windows already done are not redone. Its `progress` has every window's state.
 */
export const startBackfill = (client: Client, input: WorkflowInput<'backfillWorkflow'>, options?: SapiStartOptions) =>
  startSapiWorkflow(client, 'backfillWorkflow', input, options);
/** Runs `backfillWorkflow` to its end and resolves with its result (every window's outcome). */
export const executeBackfill = async (client: Client, input: WorkflowInput<'backfillWorkflow'>, options?: SapiStartOptions) =>
  (await startBackfill(client, input, options)).result();

function generatedId<W extends WorkflowName>(workflowType: W, input: WorkflowInput<W>): string {
  const i = input as Partial<WorkflowInput<'importTableWorkflow'> & WorkflowInput<'exportTableWorkflow'>>;
  const [verb, target] =
    workflowType === 'importTableWorkflow'
      ? ['import', `${i.bucketId}.${i.table}`]
      : workflowType === 'exportTableWorkflow'
        ? ['export', i.tableId]
        : workflowType === 'backfillWorkflow'
          ? ['backfill', (input as WorkflowInput<'backfillWorkflow'>).kind]
          : ['extract', 'config'];
  return `${verb}-${target}-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
}
