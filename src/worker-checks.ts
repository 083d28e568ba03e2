// Fail fast: what a worker checks before it polls, so that a wrong setting ends the start within seconds with one
// line naming it, instead of a worker that polls and fails every task for minutes. The plugin runs these checks
// from its worker hook (a user's own worker gets them too); `startWorker` adds the Temporal connection's.
import type { NativeConnection } from '@temporalio/worker';
import { connectionVariable, type Settings } from './config';
import { namespaceNotFoundMessage, SapiErrorCode, isSapiError, WorkerStartError } from './errors';
import { createStorageClient } from './storage-api';
import { transportCause } from './storage-api/retry-policy';

/** How long one start check waits for an answer (connect, then response), in ms: all of them end well within 15 s. */
export const START_CHECK_TIMEOUT_MS = 5_000;

/** gRPC status NOT_FOUND. */
const GRPC_NOT_FOUND = 5;

export { WorkerStartError };

/**
 * Fails with a {@link WorkerStartError} (`SAPI_WORKER_CONFIG`) when the worker's own activities (`own`, the
 * `activities` of its options) have a name of one of the plugin's (`plugin`): merged into one map, one would replace
 * the other silently, and a workflow calling `getJob` would run code it did not mean to. The message lists every
 * colliding name. The plugin's names stay as they are: they are recorded in its workflows' histories.
 */
export function checkActivityNames(own: object | undefined, plugin: object, pluginName: string): void {
  if (!own) return;
  const theirs = new Set(Object.keys(plugin));
  const taken = Object.keys(own).filter((name) => theirs.has(name));
  if (taken.length === 0) return;
  throw new WorkerStartError(
    `the worker's own activities ${taken.map((name) => JSON.stringify(name)).join(', ')} have the names of ${pluginName}'s activities: registered together, one would silently replace the other. Rename yours (the plugin's names are part of its workflows' histories), or run them on a worker of another task queue`,
  );
}

/** What {@link checkConnections} tells about a connection that answered but not well (the worker starts anyway). */
interface StartCheckOptions {
  /** Called with a line about a service that answered with a server error (it may be in maintenance). */
  warn?(message: string): void;
}

/**
 * Fails fast on a worker that could only fail later, with a {@link WorkerStartError} naming the setting: no Storage
 * connection configured; a Storage URL whose host is not found, refuses, fails TLS or does not answer within
 * {@link START_CHECK_TIMEOUT_MS}; a token the service rejects (`GET tokens/verify` answers 401/403). A service that
 * answers with a 5xx (maintenance) is no reason to refuse to start: the worker starts, the activities retry.
 */
export async function checkConnections(settings: Settings, options: StartCheckOptions = {}): Promise<void> {
  const names = Object.keys(settings.connections);
  if (names.length === 0) {
    throw new WorkerStartError(
      "SAPI_URL and SAPI_TOKEN are not set: no Storage connection configured (set them, or SAPI_<NAME>_URL and SAPI_<NAME>_TOKEN, in the worker's environment)",
    );
  }
  await Promise.all(
    names.map(async (name) => {
      const { url, token, branchId } = settings.connections[name]!;
      const client = createStorageClient({
        url,
        token,
        branchId,
        retry: { maxAttempts: 1 },
        timeouts: { connectMs: START_CHECK_TIMEOUT_MS, headersMs: START_CHECK_TIMEOUT_MS, bodyMs: START_CHECK_TIMEOUT_MS },
      });
      try {
        await client.verifyToken();
      } catch (err) {
        if (isSapiError(err) && err.code === SapiErrorCode.UNAUTHORIZED) {
          throw new WorkerStartError(`${connectionVariable(name, 'token')} is rejected by ${url}: ${err.message}`, { cause: err });
        }
        if (isSapiError(err) && (err.code === SapiErrorCode.NETWORK || err.code === SapiErrorCode.TIMEOUT)) {
          throw new WorkerStartError(`${connectionVariable(name, 'url')} ${url}: ${transportCause(err) ?? err.message}`, { cause: err });
        }
        // it answered, with a server error or something unexpected: start anyway, the activities retry
        options.warn?.(
          `Storage connection "${name}" (${url}) answered the start check with: ${err instanceof Error ? err.message : String(err)}; starting anyway`,
        );
      } finally {
        await client.close();
      }
    }),
  );
}

/**
 * Fails with a {@link WorkerStartError} (`SAPI_TEMPORAL_NAMESPACE_NOT_FOUND`) when `namespace` does not exist on the
 * server `connection` reaches; `address` only names it in the message. Other failures of the call are left to the
 * worker (it reports them itself).
 */
export async function checkNamespace(connection: NativeConnection, namespace: string, address: string): Promise<void> {
  try {
    await connection.withDeadline(Date.now() + START_CHECK_TIMEOUT_MS, () => connection.workflowService.describeNamespace({ namespace }));
  } catch (err) {
    if ((err as { code?: unknown }).code === GRPC_NOT_FOUND) throw namespaceNotFound(namespace, address, err);
  }
}

function namespaceNotFound(namespace: string, address: string, cause: unknown): WorkerStartError {
  return new WorkerStartError(namespaceNotFoundMessage(namespace, address), { code: SapiErrorCode.TEMPORAL_NAMESPACE_NOT_FOUND, cause });
}
