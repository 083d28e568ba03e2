// Is anybody there? Before a run command starts a workflow and waits for it, it asks Temporal which workers polled
// the task queue lately: a workflow on a queue no worker polls waits forever, and the CLI would wait with it.
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { CliSettings } from './context';
import { CliError, NO_WORKER } from './failure';

/** A long poll lasts up to about 70 s before the worker polls again: a poller older than this stopped polling (ms). */
const MAX_POLL_AGE_MS = 120_000;
/** How long a run command waits for a worker to appear before it gives up (ms); with connecting, well within 10 s. */
export const WORKER_WAIT_MS = 5_000;
/** Between two looks at the task queue while waiting for a worker (ms). */
const WORKER_RECHECK_MS = 1_000;

/** A queue a workflow needs a worker on: its workflow tasks, or (`--transfer-task-queue`) its transfer activities. */
export interface NeededQueue {
  name: string;
  kind: 'workflow' | 'activity';
}

/** A poller as Temporal lists it (`describeTaskQueue`), reduced to what the check reads. */
interface PollerSeen {
  identity?: string | null;
  lastAccessTime?: { seconds?: number | Long | string | null; nanos?: number | null } | null;
}

type Long = { toNumber(): number };

/** Epoch ms of a protobuf timestamp (0 when absent). */
export function timestampMs(ts: PollerSeen['lastAccessTime']): number {
  if (!ts) return 0;
  const seconds = ts.seconds;
  const whole = typeof seconds === 'object' && seconds !== null ? seconds.toNumber() : Number(seconds ?? 0);
  return whole * 1000 + Math.floor((ts.nanos ?? 0) / 1e6);
}

/** The identities (`pid@host`) of the pollers that polled within `maxAgeMs` of `now`. */
export function activePollers(pollers: readonly PollerSeen[], now: number, maxAgeMs: number = MAX_POLL_AGE_MS): string[] {
  return pollers.filter((poller) => now - timestampMs(poller.lastAccessTime) <= maxAgeMs).map((poller) => poller.identity || 'unnamed worker');
}

/**
 * The command that starts a worker for `queue`: any worker with the Storage connection for the workflow queue, a
 * worker on the host that has the file for a transfer queue.
 */
export function startWorkerHint(settings: CliSettings, queue: NeededQueue): string {
  const connect = `--namespace ${settings.namespace} --address ${settings.address}`;
  return queue.kind === 'workflow'
    ? `\`sapi-temporal worker --task-queue ${queue.name} ${connect}\` with SAPI_URL/SAPI_TOKEN set`
    : `\`SAPI_HOST_TASK_QUEUE=${queue.name} sapi-temporal worker ${connect}\` on the host that has the file`;
}

/** `no worker polls task queue q in namespace n at a (none in the last 120 s)`. */
export function noWorkerSeen(settings: CliSettings, queue: NeededQueue): string {
  return `no worker polls task queue ${queue.name} in namespace ${settings.namespace} at ${settings.address} (none in the last ${MAX_POLL_AGE_MS / 1000} s)`;
}

/** Why a run command started nothing: where it looked, how long it waited, what to start, and `--detach`. */
export function noWorkerMessage(settings: CliSettings, queue: NeededQueue, waitedMs: number): string {
  return `${noWorkerSeen(settings, queue)}, waited ${Math.round(waitedMs / 1000)} s; nothing was started. Start one: ${startWorkerHint(settings, queue)}; or pass --detach to start the workflow anyway (it waits for a worker)`;
}

/** The workers that polled `queue` lately, as Temporal lists them. */
export async function pollersOf(client: Client, namespace: string, queue: NeededQueue, now: () => number = Date.now): Promise<string[]> {
  const { pollers } = await client.workflowService.describeTaskQueue({
    namespace,
    taskQueue: { name: queue.name, kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
    taskQueueType:
      queue.kind === 'workflow' ? temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW : temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
  });
  return activePollers(pollers ?? [], now());
}

/** How {@link requireWorkers} waits; tests shorten it. */
interface RequireWorkersOptions {
  waitMs?: number;
  recheckMs?: number;
  /** Called once when the first look found nobody (the command says it is waiting). */
  onWaiting?(queue: NeededQueue): void;
  now?(): number;
  sleep?(ms: number): Promise<void>;
}

/**
 * Resolves once every queue in `queues` has a worker that polled lately, looking again every second for up to
 * {@link WORKER_WAIT_MS} (a worker that is just starting counts); rejects with a {@link CliError}
 * (`SAPI_CLI_NO_WORKER`) naming the queue and the command to start a worker otherwise.
 */
export async function requireWorkers(
  client: Client,
  settings: CliSettings,
  queues: readonly NeededQueue[],
  options: RequireWorkersOptions = {},
): Promise<void> {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const waitMs = options.waitMs ?? WORKER_WAIT_MS;
  const began = now();
  for (const queue of queues) {
    let warned = false;
    while ((await pollersOf(client, settings.namespace, queue, now)).length === 0) {
      const waited = now() - began;
      if (waited >= waitMs) throw new CliError(NO_WORKER, noWorkerMessage(settings, queue, waited));
      if (!warned) options.onWaiting?.(queue);
      warned = true;
      await sleep(Math.min(options.recheckMs ?? WORKER_RECHECK_MS, waitMs - waited));
    }
  }
}
