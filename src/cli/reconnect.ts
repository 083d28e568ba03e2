// Riding out Temporal outages while the CLI follows a workflow: which errors mean "Temporal is unreachable" (as
// opposed to "the workflow failed"), how long to wait between attempts, and the retry loop that gives up only
// after a configured time. The workflow keeps running on the server meanwhile; only the CLI lost sight of it.
import { isGrpcServiceError, WorkflowFailedError } from '@temporalio/client';
import { TemporalFailure } from '@temporalio/common';
import { pollBackoff, type PollSchedule } from '../contracts/poll-schedule';
import { CliError, LOST_CONTACT_EXIT_CODE } from './failure';
import { formatDuration } from './progress';
import { SapiErrorCode } from '../errors';

/** Waits between reconnection attempts: 1 s, ×2, at most 10 s. */
const RECONNECT_SCHEDULE: Readonly<Pick<PollSchedule, 'initialMs' | 'factor' | 'maxMs'>> = Object.freeze({ initialMs: 1_000, factor: 2, maxMs: 10_000 });

/** gRPC status codes of a server that did not answer (not of one that answered with an error). */
const GRPC_UNAVAILABLE = 14;
const GRPC_DEADLINE_EXCEEDED = 4;
const UNREACHABLE_GRPC_CODES: ReadonlySet<number> = new Set([GRPC_UNAVAILABLE, GRPC_DEADLINE_EXCEEDED]);

/** Node socket errors of a server that is down or cut off. */
const UNREACHABLE_ERRNO_CODES: ReadonlySet<string> = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

/** Code of the {@link CliError} a failed (re)connection raises. */
export const TEMPORAL_UNREACHABLE = SapiErrorCode.CLI_TEMPORAL_UNREACHABLE;
/** Code of the {@link CliError} raised after giving up. */
const TEMPORAL_LOST_CONTACT = SapiErrorCode.CLI_TEMPORAL_LOST_CONTACT;

/** Longest chain of causes followed (a guard against cycles). */
const MAX_CAUSE_DEPTH = 16;

/**
 * True when `err` says Temporal did not answer: gRPC UNAVAILABLE or DEADLINE_EXCEEDED, a refused or reset socket,
 * a failed (re)connection, or a client `ServiceError` caused by one of them. False for everything Temporal answered
 * (not found, invalid argument, …) and for a workflow's own failure, even one caused by a timeout inside it.
 */
export function isTemporalUnreachable(err: unknown): boolean {
  let current: unknown = err;
  for (let depth = 0; depth < MAX_CAUSE_DEPTH && current instanceof Error; depth++) {
    if (current instanceof WorkflowFailedError || current instanceof TemporalFailure) return false;
    if (current instanceof CliError) return current.code === TEMPORAL_UNREACHABLE;
    if (isGrpcServiceError(current)) return UNREACHABLE_GRPC_CODES.has(current.code);
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && UNREACHABLE_ERRNO_CODES.has(code)) return true;
    current = current.cause;
  }
  return false;
}

/** Wait before reconnection attempt `attempt` (0-based): 1 s, 2 s, 4 s, 8 s, then 10 s. */
export function reconnectDelay(attempt: number, schedule: Partial<PollSchedule> = RECONNECT_SCHEDULE): number {
  return pollBackoff(attempt, { ...RECONNECT_SCHEDULE, ...schedule });
}

/** How {@link retryWhileUnreachable} waits and what it tells. */
export interface RetryWhileUnreachableOptions {
  /** Give up after Temporal was unreachable this long without a break (ms). */
  timeoutMs: number;
  /** Waits between attempts. Default {@link RECONNECT_SCHEDULE}. */
  schedule?: Partial<PollSchedule>;
  /** Called once per outage, on its first error. */
  onUnreachable?(err: unknown): void;
  /** Called when Temporal answers again after an outage, with how long it lasted (ms). */
  onReconnected?(outageMs: number): void;
  /** Clock and timer; tests pass fakes. */
  now?(): number;
  sleep?(ms: number): Promise<void>;
}

/** Raised after Temporal stayed unreachable for the whole timeout; exit code {@link LOST_CONTACT_EXIT_CODE}. */
export class TemporalLostError extends CliError {
  constructor(
    readonly outageMs: number,
    cause: unknown,
  ) {
    super(TEMPORAL_LOST_CONTACT, `Temporal unreachable for ${formatDuration(outageMs)}`, LOST_CONTACT_EXIT_CODE, { cause });
    this.name = 'TemporalLostError';
  }
}

/**
 * Runs `attempt` until it settles with anything but "Temporal unreachable". After such an error it waits
 * ({@link reconnectDelay}), calls `reconnect` (a fresh connection) and tries again. A successful reconnection
 * ends the outage; one lasting `timeoutMs` ends the loop with a {@link TemporalLostError}. Other errors pass through.
 */
export async function retryWhileUnreachable<T>(attempt: () => Promise<T>, reconnect: () => Promise<void>, options: RetryWhileUnreachableOptions): Promise<T> {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  let outageSince: number | undefined;
  let failures = 0;
  const unreachable = async (err: unknown) => {
    if (!isTemporalUnreachable(err)) throw err;
    if (outageSince === undefined) {
      outageSince = now();
      options.onUnreachable?.(err);
    }
    const outageMs = now() - outageSince;
    if (outageMs >= options.timeoutMs) throw new TemporalLostError(outageMs, err);
    await sleep(Math.min(reconnectDelay(failures++, options.schedule), options.timeoutMs - outageMs));
  };
  for (;;) {
    if (outageSince !== undefined) {
      try {
        await reconnect();
      } catch (err) {
        await unreachable(err);
        continue;
      }
      options.onReconnected?.(now() - outageSince);
      outageSince = undefined;
      failures = 0;
    }
    try {
      return await attempt();
    } catch (err) {
      await unreachable(err);
    }
  }
}
