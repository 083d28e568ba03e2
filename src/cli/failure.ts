// Turns whatever a command failed with into the one line the CLI prints: what failed, the failure type and the
// root cause, not the wrappers Temporal puts around it ("Workflow execution failed", "Activity task failed").
import { WorkflowFailedError } from '@temporalio/client';
import {
  ActivityFailure,
  ApplicationFailure,
  CancelledFailure,
  ChildWorkflowFailure,
  NamespaceNotFoundError,
  ServerFailure,
  TerminatedFailure,
  TimeoutFailure,
} from '@temporalio/common';
import { SapiErrorCode, namespaceNotFoundMessage, isSapiError } from '../errors';

/** Longest chain of causes followed (a guard against cycles). */
const MAX_CAUSE_DEPTH = 16;

import { FAILURE_EXIT_CODE, LOST_CONTACT_EXIT_CODE, USAGE_EXIT_CODE } from './exit-codes';

export { FAILURE_EXIT_CODE, LOST_CONTACT_EXIT_CODE, USAGE_EXIT_CODE };

/** `SAPI_CLI_NO_WORKER`: a run command found no worker polling its task queue and started nothing. */
export const NO_WORKER = SapiErrorCode.CLI_NO_WORKER;

/** The codes a {@link CliError} carries: the registry's `SAPI_CLI_…` (the CLI raises the others through their classes). */
type CliErrorCode = Extract<SapiErrorCode, `SAPI_CLI_${string}`>;

/** An error the CLI raises itself; `code` is the failure type on the stderr line, `exitCode` the process's. */
export class CliError extends Error {
  /** What the command found, added to the `--json` error object (e.g. `replay-check`'s verdicts). */
  readonly details?: Record<string, unknown>;

  constructor(
    readonly code: CliErrorCode,
    message: string,
    readonly exitCode: number = FAILURE_EXIT_CODE,
    options?: { cause?: unknown; details?: Record<string, unknown> },
  ) {
    super(message, options);
    this.details = options?.details;
    this.name = 'CliError';
  }
}

/** The exit code a failed command ends with: the first {@link CliError}'s in the cause chain, else 1. */
export function exitCodeOf(err: unknown): number {
  let current = err;
  for (let depth = 0; depth < MAX_CAUSE_DEPTH && current instanceof Error; depth++) {
    if (current instanceof CliError) return current.exitCode;
    current = current.cause;
  }
  return FAILURE_EXIT_CODE;
}

/**
 * A command's failure as the CLI reports it: the one line for stderr (`message`), the failure type (`code`) and the
 * workflow it concerns, when one was started.
 */
export class CommandFailedError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly workflowId: string | undefined,
    options: { cause: unknown },
  ) {
    super(message, options);
    this.name = 'CommandFailedError';
  }
}

/** What `--json` prints on stdout when a command fails (instead of its result). */
interface ErrorJson {
  error: {
    /** `SAPI_…`, `TIMEOUT_…`, `CANCELLED`, `TERMINATED`, or commander's code for a usage error (`commander.unknownOption`). */
    code: string;
    /** The line stderr shows, without the `sapi-temporal: ` prefix. */
    message: string;
    /** The workflow concerned, when one was started. */
    workflowId?: string;
    /** The process's exit code. */
    exitCode: number;
  };
}

/** The failure type of `err`: the code of a {@link CommandFailedError} or {@link CliError} in its chain, else its root failure's type. */
export function failureCode(err: unknown): string {
  let current = err;
  for (let depth = 0; depth < MAX_CAUSE_DEPTH && current instanceof Error; depth++) {
    if (current instanceof CommandFailedError || current instanceof CliError) return current.code;
    current = current.cause;
  }
  return rootFailure(err).type;
}

/** `err` as `--json` prints it: one object `{error: {code, message, workflowId?, exitCode}}`. */
export function errorJson(err: unknown, exitCode: number = exitCodeOf(err)): ErrorJson {
  const message = printable(oneLine(err instanceof Error ? err.message : String(err)));
  let workflowId: string | undefined;
  let details: Record<string, unknown> | undefined;
  for (let current = err, depth = 0; depth < MAX_CAUSE_DEPTH && current instanceof Error; depth++, current = current.cause) {
    if (current instanceof CliError) details ??= current.details;
    if (current instanceof CommandFailedError) {
      workflowId = current.workflowId;
      break;
    }
  }
  return { error: { code: failureCode(err), message, ...(workflowId === undefined ? {} : { workflowId }), exitCode, ...details } };
}

/** The failure that says what went wrong, with its type and the activity it came from. */
export interface RootFailure {
  /** `SAPI_…` for our failures, `TIMEOUT_<kind>`, `CANCELLED`, `TERMINATED`, or the error's code/name. */
  type: string;
  message: string;
  /** Activity type, when the failure came from an activity. */
  activity?: string;
}

/** Unwraps WorkflowFailedError → (ChildWorkflowFailure →) ActivityFailure → the failure underneath. */
export function rootFailure(err: unknown): RootFailure {
  let current = err;
  let activity: string | undefined;
  for (let depth = 0; depth < MAX_CAUSE_DEPTH && isWrapper(current) && current.cause !== undefined; depth++) {
    if (current instanceof ActivityFailure) activity = current.activityType;
    current = current.cause;
  }
  const namespace = missingNamespace(current);
  if (namespace !== undefined) return { type: SapiErrorCode.TEMPORAL_NAMESPACE_NOT_FOUND, message: namespaceNotFoundMessage(namespace), activity };
  return { type: failureType(current), message: failureMessage(current), activity };
}

/**
 * The namespace a failure says does not exist: the client's `NamespaceNotFoundError`, or the server's gRPC
 * NOT_FOUND (`Namespace nope is not found.`) that other calls raise as is; one code for both (`import` and `status`).
 */
function missingNamespace(err: unknown): string | undefined {
  if (err instanceof NamespaceNotFoundError) return err.namespace;
  if (!(err instanceof Error) || (err as { code?: unknown }).code !== GRPC_NOT_FOUND) return undefined;
  return /Namespace (\S+) is not found/.exec(err.message)?.[1];
}

/** gRPC status NOT_FOUND. */
const GRPC_NOT_FOUND = 5;

/**
 * One line for stderr: `import failed [SAPI_JOB_FAILED] Storage job 12 (…) failed: … (workflow import-…)`.
 * `what` names the command (`import`), `workflowId` where to look in the Temporal UI.
 */
export function describeFailure(err: unknown, what: string, workflowId?: string): string {
  const root = rootFailure(err);
  const where = [root.activity && `activity ${root.activity}`, workflowId && `workflow ${workflowId}`].filter(Boolean);
  return oneLine(`${what} failed [${root.type}] ${root.message}${where.length ? ` (${where.join(', ')})` : ''}`);
}

/** Folds line breaks so a message stays one line on stderr. */
export function oneLine(message: string): string {
  return message.trim().replace(/\s*\n\s*/g, ' | ');
}

/** `text` without control characters (a log file or CI console shows them as garbage): each becomes a space. */
export function printable(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ');
}

function isWrapper(err: unknown): err is Error & { cause?: unknown } {
  return err instanceof WorkflowFailedError || err instanceof ActivityFailure || err instanceof ChildWorkflowFailure;
}

function failureType(err: unknown): string {
  if (err instanceof ApplicationFailure) return err.type ?? 'ApplicationFailure';
  if (err instanceof TimeoutFailure) return `TIMEOUT_${err.timeoutType ?? 'UNKNOWN'}`;
  if (err instanceof CancelledFailure) return 'CANCELLED';
  if (err instanceof TerminatedFailure) return 'TERMINATED';
  if (err instanceof ServerFailure) return 'SERVER_FAILURE';
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return typeof code === 'string' && code !== '' ? code : err.name;
  }
  return 'Error';
}

/** The message, plus the causes' messages for other errors (a gRPC error says why only in its cause). */
function failureMessage(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  // our failures carry a complete message (where, what, how to fix); their causes repeat it
  if (err instanceof ApplicationFailure) return err.message || (err.type ?? 'application failure');
  if (isSapiError(err)) return err.message;
  const parts = [err.message || err.name];
  let cause: unknown = err.cause;
  for (let depth = 0; depth < MAX_CAUSE_DEPTH && cause instanceof Error; depth++) {
    const message = cause.message;
    if (message && !parts.some((part) => part.includes(message))) parts.push(message);
    cause = cause.cause;
  }
  return parts.join(': ');
}
