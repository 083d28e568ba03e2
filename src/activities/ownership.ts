/**
 * The second line of defence against forged run state (a `resume` or checkpoint in a public workflow input that names
 * another run's staging, file, table or bucket): an activity that reads, writes or deletes something a run owns checks,
 * from its own context, that it belongs to the run asking (its continue-as-new chain). The workflow refuses forged
 * state up front; these checks hold even if a workflow forwards it.
 *
 * A run's chain is known from the server: the workflow id and run id of the activity's context, and the chain's first
 * run id (`DescribeWorkflowExecution`, asked at most once per run and worker, only when the run is not the first).
 */
import { Context } from '@temporalio/activity';
import { inContext, SapiInputForbiddenError, SapiNetworkError } from '../errors';
import { stagingRunKey } from '../contracts/extract-plan';

/** The run an activity works for: its workflow id, its run id and (when the server says) its chain's first run id. */
interface RunChain {
  workflowId: string;
  runId: string;
}

/** First run id of (namespace, workflow id, run id); runs never change chains, so the answers are kept. */
const firstRunIds = new Map<string, string | null>();
const MAX_CACHED = 10_000;

/** The workflow run the current activity works for; a call outside a workflow's activity is refused. */
function currentRun(field: string): RunChain & { context: Context } {
  const context = Context.current();
  const execution = context.info.workflowExecution;
  if (!execution) throw new SapiInputForbiddenError(field, 'only an activity of a workflow run may use run-owned state');
  return { workflowId: execution.workflowId, runId: execution.runId, context };
}

/**
 * The first run id of the chain `runId` belongs to under `workflowId`, from the server: `null` when the server knows no
 * such run of that workflow id, `undefined` when it does not report first run ids (an older server).
 */
export async function firstRunIdOf(context: Context, workflowId: string, runId: string): Promise<string | null | undefined> {
  const namespace = context.info.namespace;
  const key = `${namespace}\u0000${workflowId}\u0000${runId}`;
  const known = firstRunIds.get(key);
  if (known !== undefined) return known;
  let answer: string | null | undefined;
  try {
    const res = await context.client.workflowService.describeWorkflowExecution({ namespace, execution: { workflowId, runId } });
    const first = res.workflowExecutionInfo?.firstRunId;
    answer = first ? first : undefined;
  } catch (err) {
    if ((err as { code?: number }).code === 5 /* NOT_FOUND */) answer = null;
    else {
      const request = { method: 'DescribeWorkflowExecution', path: `${workflowId}/${runId}` };
      const failure = new SapiNetworkError({ request, cause: err, mayHaveReachedService: false });
      throw inContext(failure, `could not ask Temporal which run chain ${workflowId}/${runId} belongs to: ${(err as Error).message}`);
    }
  }
  if (answer !== undefined) {
    if (firstRunIds.size >= MAX_CACHED) firstRunIds.delete(firstRunIds.keys().next().value!);
    firstRunIds.set(key, answer);
  }
  return answer;
}

/**
 * Refuses (`SAPI_INPUT_FORBIDDEN`, naming `field`) a staging run key that is not the asking run's own: the key must be
 * `stagingRunKey(<this workflow id>, <this chain's first run id>)`. Checked before anything is read, written or deleted.
 */
export async function assertOwnRunKey(runKey: unknown, field: string): Promise<void> {
  const run = currentRun(field);
  const refuse = (why: string) =>
    new SapiInputForbiddenError(
      field,
      `the staging key ${JSON.stringify(runKey)} is not this run's (${why}); a run reads, writes and deletes only its own staging`,
    );
  if (typeof runKey !== 'string') throw refuse('not a string');
  const slash = runKey.indexOf('/');
  const keyRunId = runKey.slice(slash + 1);
  if (slash < 0 || !/^[A-Za-z0-9-]{1,100}$/.test(keyRunId) || runKey !== stagingRunKey(run.workflowId, keyRunId)) {
    throw refuse(`this run is workflow ${JSON.stringify(run.workflowId)}`);
  }
  if (keyRunId === run.runId) return; // the first run of its chain (run ids are unique)
  const first = await firstRunIdOf(run.context, run.workflowId, run.runId);
  if (first === undefined) {
    run.context.log.warn('the Temporal server does not report first run ids: the staging key was checked against the workflow id only', { field });
    return;
  }
  if (first !== keyRunId) throw refuse(`this run's chain began with run ${first ?? 'unknown'}`);
}

/** The workflow run id inside a marker this package sends as `X-KBC-RunId` (`sapi-temporal.<run id>.<activity id>`). */
export function runIdOfMarker(marker: unknown): string | undefined {
  if (typeof marker !== 'string') return undefined;
  const m = /^sapi-temporal\.([^.]+)\.[^.]+$/.exec(marker);
  return m?.[1];
}

/**
 * Whether `marker` (a `runId` the service recorded on a file, job or bucket) was sent by an activity of the asking
 * run's chain: its run is this run, or a run of this workflow id whose chain began with the same first run.
 */
export async function markedByThisChain(marker: unknown, field: string): Promise<boolean> {
  const markerRun = runIdOfMarker(marker);
  if (markerRun === undefined) return false;
  const run = currentRun(field);
  if (markerRun === run.runId) return true;
  const ours = await firstRunIdOf(run.context, run.workflowId, run.runId);
  const theirs = await firstRunIdOf(run.context, run.workflowId, markerRun);
  if (theirs === null) return false; // no run of this workflow id
  if (ours === undefined || theirs === undefined) return ours === undefined && theirs === undefined; // an older server: same workflow id
  return ours === theirs;
}
