// `sapi-temporal pause|resume|cancel|limit|extend-deadline <workflowId>`: control a running run through the workflows'
// validated updates. A refused update (a resume of a run that is not paused, a deadline in the past) changes nothing
// and writes nothing to the run's history; an accepted one prints the run's new state.
import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import type { Command } from 'commander';
import type { CliContext, TemporalFlags } from './context';
import { addOutputOptions, addTemporalOptions, cliSettings, integerParser, parseDuration } from './common';
import { CliError, describeFailure } from './failure';
import { SapiErrorCode, SapiInvalidInputError } from '../errors';
import type { ExtractProgress } from '../contracts/extract';
import type { TransferProgress } from '../contracts/transfer';

interface ControlFlags extends TemporalFlags {
  output?: 'text' | 'json';
  json?: boolean;
  reason?: string;
  maxPages?: number;
  /** ms, from `--by`. */
  by?: number;
  until?: string;
}

/** One control command: the update it sends, the workflow types that have it, and its argument from the flags. */
interface Control {
  verb: string;
  update: string;
  description: string;
  types: readonly string[];
  arg(flags: ControlFlags): unknown[];
  options?(command: Command): Command;
}

const EXTRACT = ['extractWorkflow'];
/** A backfill takes pause, resume and cancel as an extraction does (they act on the starting of its windows). */
const PAUSABLE = [...EXTRACT, 'backfillWorkflow'];
const TRANSFERS = ['importTableWorkflow', 'exportTableWorkflow'];

const CONTROLS: readonly Control[] = [
  {
    verb: 'pause',
    update: 'pause',
    types: PAUSABLE,
    description:
      'pause an extraction after the batch in flight, or a backfill (no further window starts; the running ones end) (refused when it is paused, cancelling or loading)',
    arg: () => [],
  },
  { verb: 'resume', update: 'resume', types: PAUSABLE, description: 'resume a paused extraction or backfill (refused when it is not paused)', arg: () => [] },
  {
    verb: 'cancel',
    update: 'cancel',
    types: [...TRANSFERS, ...PAUSABLE],
    description:
      'cancel a run (a Temporal cancellation request, after checking the run can still be cancelled); it ends cancelled: an import or export now (a Storage job already started is not polled further), an extraction after the batch in flight (its staged pages loaded unless loadOnCancel is false), a backfill once its running windows end (no further window starts)',
    arg: (flags) => [flags.reason !== undefined ? { reason: flags.reason } : {}],
    options: (command) => command.option('--reason <text>', "why (recorded with the cancellation request in the run's history)"),
  },
  {
    verb: 'limit',
    update: 'setLimits',
    types: EXTRACT,
    description:
      'set limits of a running extraction: stop fetching at --max-pages pages in all, then load the tables (exact: refused below the pages already fetched plus the most the call in flight may add, and the refusal names the least limit accepted)',
    arg: (flags) => {
      if (flags.maxPages === undefined) throw new SapiInvalidInputError('give --max-pages <n>');
      return [{ maxPages: flags.maxPages }];
    },
    options: (command) => command.option('--max-pages <n>', 'stop after this many pages in all', integerParser(1)),
  },
  {
    verb: 'extend-deadline',
    update: 'extendDeadline',
    types: TRANSFERS,
    description:
      'move the deadline of the Storage job an import or export polls (refused when no job is polled, or the time is not later than the current deadline)',
    arg: (flags) => {
      if ((flags.by === undefined) === (flags.until === undefined)) throw new SapiInvalidInputError('give one of --by <duration> or --until <ISO time>');
      return [{ until: flags.until ?? new Date(Date.now() + flags.by!).toISOString() }];
    },
    options: (command) =>
      command.option('--by <duration>', 'from now: 30m, 2h, 1d', parseDuration).option('--until <time>', 'an ISO time, e.g. 2026-11-28T06:00:00Z'),
  },
];

/** Sends `control`'s update to the run `workflowId` and resolves with the run's new state. */
async function sendControl(
  client: Client,
  control: Control,
  workflowId: string,
  flags: ControlFlags,
): Promise<{ workflowType: string; state: TransferProgress | ExtractProgress }> {
  const handle = client.workflow.getHandle(workflowId);
  let workflowType: string;
  try {
    const described = await handle.describe();
    workflowType = described.type;
    if (described.status.name !== 'RUNNING')
      throw new CliError(SapiErrorCode.CLI_UPDATE_REFUSED, `${workflowId} is not running (${described.status.name.toLowerCase()})`);
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw new CliError(SapiErrorCode.CLI_WORKFLOW_NOT_FOUND, `no workflow ${workflowId}`, undefined, { cause: err });
    throw err;
  }
  if (!control.types.includes(workflowType)) {
    throw new SapiInvalidInputError(`${control.verb} applies to ${control.types.join(' and ')} runs; ${workflowId} is a ${workflowType}`);
  }
  if (control.verb === 'cancel') return { workflowType, state: await requestCancel(client, workflowId, workflowType, flags.reason) };
  const args = control.arg(flags);
  // one id for every attempt: the server takes an update it already has once
  const updateId = randomUUID();
  for (let attempt = 1; ; attempt++) {
    try {
      const state = await (args.length > 0
        ? handle.executeUpdate<TransferProgress | ExtractProgress, [unknown]>(control.update, { args: [args[0]], updateId })
        : handle.executeUpdate<TransferProgress | ExtractProgress, []>(control.update, { updateId }));
      return { workflowType, state };
    } catch (err) {
      if (err instanceof WorkflowUpdateFailedError) {
        throw new CliError(SapiErrorCode.CLI_UPDATE_REFUSED, `refused by ${workflowId}: ${err.cause?.message ?? err.message}`, undefined, { cause: err });
      }
      if (attempt >= UPDATE_ATTEMPTS || !lostWithItsTask(err)) throw err;
      await new Promise((resolve) => setTimeout(resolve, 250 * attempt));
    }
  }
}

/** Phases in which an import or export is past cancelling (as its `cancel` update's validator says). */
const TRANSFER_ENDING: ReadonlySet<string> = new Set(['metadata', 'done', 'failed', 'cancelled']);

/** Why `state` can no longer be cancelled (the `cancel` update's refusals), or undefined. */
export function cancelRefusal(workflowType: string, state: TransferProgress | ExtractProgress): string | undefined {
  if (state.cancelling !== undefined) return `already being cancelled (${state.cancelling})`;
  if (workflowType === 'backfillWorkflow') return ['running', 'paused'].includes(state.phase) ? undefined : `cannot cancel: the backfill is ${state.phase}`;
  if (workflowType === 'extractWorkflow')
    return state.phase === 'extracting' || state.phase === 'paused' ? undefined : `cannot cancel: the extraction is ${state.phase}`;
  return TRANSFER_ENDING.has(state.phase) ? `too late to cancel: the run is ${state.phase === 'metadata' ? 'past its Storage job' : state.phase}` : undefined;
}

/**
 * Cancels a run as Temporal cancels any run (a cancellation request, `reason` recorded with it in the run's history),
 * so it ends *cancelled*: first the run's `progress` is read and a run past cancelling is refused as its `cancel`
 * update would refuse it. Answers the progress with the reason as `cancelling`.
 */
async function requestCancel(
  client: Client,
  workflowId: string,
  workflowType: string,
  reason: string | undefined,
): Promise<TransferProgress | ExtractProgress> {
  const handle = client.workflow.getHandle(workflowId);
  const state = await handle.query<TransferProgress | ExtractProgress>('progress');
  const refusal = cancelRefusal(workflowType, state);
  if (refusal !== undefined) throw new CliError(SapiErrorCode.CLI_UPDATE_REFUSED, `refused by ${workflowId}: ${refusal}`);
  const why = reason ?? 'sapi-temporal cancel';
  await client.workflowService.requestCancelWorkflowExecution({
    namespace: client.options.namespace,
    workflowExecution: { workflowId },
    identity: client.options.identity,
    requestId: randomUUID(),
    reason: why,
  });
  return { ...state, cancelling: why };
}

/** Attempts of an update whose workflow task was lost (see {@link lostWithItsTask}). */
const UPDATE_ATTEMPTS = 5;

/**
 * The server dropped the update with the workflow task that carried it (`FAILED_PRECONDITION … unexpected workflow
 * task failure`): e.g. the run tried to end in that task while a timer fired, so the server refused the task. Nothing
 * was applied; sending it again is what the server asks for.
 */
export function lostWithItsTask(err: unknown): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    if (/unexpected workflow task failure/i.test(e.message)) return true;
  }
  return false;
}

/** The run's new state in one line: phase and what it says about pausing, cancelling, limits and deadline. */
function describeState(verb: string, workflowId: string, state: TransferProgress | ExtractProgress): string {
  const parts = [`phase ${state.phase}`];
  if ('pages' in state)
    parts.push(
      `${state.pages} pages`,
      ...(state.paused ? ['paused (or pausing after the batch in flight)'] : []),
      ...(state.maxPages !== undefined ? [`max ${state.maxPages} pages`] : []),
    );
  if ('cancelling' in state && state.cancelling !== undefined) parts.push(`cancelling: ${state.cancelling}`);
  if ('deadlineAt' in state && state.deadlineAt !== undefined) parts.push(`job deadline ${new Date(state.deadlineAt).toISOString()}`);
  return `${verb}: ${workflowId} accepted (${parts.join(', ')})\n`;
}

/** Registers the control commands. */
export function registerControlCommands(program: Command, context: CliContext): void {
  for (const control of CONTROLS) {
    const command = addOutputOptions(
      addTemporalOptions(program.command(control.verb).description(control.description).argument('<workflowId>', "the run's workflow id")),
      "the run's new state",
    );
    (control.options?.(command) ?? command).action(async (workflowId: string, flags: ControlFlags) => {
      const settings = cliSettings(context.env, flags);
      const { TemporalLink } = await import('./temporal-link');
      const link = await TemporalLink.open(settings);
      try {
        const { state } = await sendControl(link.client, control, workflowId, flags).catch((err: unknown) => {
          throw new Error(describeFailure(err, control.verb), { cause: err });
        });
        process.stdout.write(flags.json || flags.output === 'json' ? `${JSON.stringify(state)}\n` : describeState(control.verb, workflowId, state));
      } finally {
        await link.close();
      }
    });
  }
}
