/**
 * User functions in `userData` (`{"function": "date", "args": ["Y-m-d", {"time": "currentStart"}]}`, `{"attr": …}`).
 * Pure module (no clock, no crypto: both passed in).
 *
 * The reference evaluates a job's user data once when the job starts, with the `attr` (configuration attributes)
 * and `time` (`previousStart`, `currentStart`) contexts. Ours does it in two steps so the workflow stays free of
 * crypto: {@link userDataForRun} evaluates what needs no hashing with the job run's start as "now" (workflow time;
 * the scroller state's `startedAtMs`), leaving hashing calls as plain call objects with literal arguments; then
 * {@link finishUserData} (in `processPage`, in the activity) finishes those with the same "now". Both are
 * deterministic, so replay and retries give the same cells. The result is never checkpointed: the workflow derives
 * it again from the job and its run's start.
 */
import { deferredToJson, evaluateFunctions, timeContext, type CryptoFunctions, type FunctionScope } from './functions';
import type { JobConfig, UserDataValue } from './types';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** True when the job's user data holds a function call or a context reference still to evaluate. */
function hasUserDataFunctions(job: Pick<JobConfig, 'userData'>): boolean {
  return Object.values(job.userData ?? {}).some((v) => isObject(v));
}

/**
 * The job as its run sees it: user data with the `attr` and `time` contexts evaluated at `startedAtMs` (the job
 * run's start). Hashing calls stay as `{function, args}` objects (finished by {@link finishUserData}). A job without
 * user functions is returned as is.
 */
export function userDataForRun<J extends Pick<JobConfig, 'userData' | 'id'>>(job: J, scope: FunctionScope, startedAtMs: number): J {
  if (!hasUserDataFunctions(job)) return job;
  const contexts = { attr: scope.attributes, time: timeContext(scope, startedAtMs) };
  const userData: Record<string, UserDataValue | Record<string, unknown>> = {};
  for (const [key, value] of Object.entries(job.userData ?? {})) {
    userData[key] = isObject(value)
      ? (deferredToJson(evaluateFunctions(value, contexts, { nowMs: startedAtMs, path: `userData.${key}` })) as UserDataValue | Record<string, unknown>)
      : value;
  }
  return { ...job, userData };
}

/**
 * User data with the calls {@link userDataForRun} left (hashing) finished with `crypto` at `nowMs` (the job run's
 * start). Values that are already scalars are kept.
 */
export function finishUserData<J extends Pick<JobConfig, 'userData'>>(job: J, crypto: CryptoFunctions | undefined, nowMs: number | undefined): J {
  if (!hasUserDataFunctions(job)) return job;
  const userData: Record<string, UserDataValue | Record<string, unknown>> = {};
  for (const [key, value] of Object.entries(job.userData ?? {})) {
    userData[key] = isObject(value)
      ? (deferredToJson(evaluateFunctions(value, {}, { nowMs: nowMs ?? 0, crypto, path: `userData.${key}` })) as UserDataValue | Record<string, unknown>)
      : value;
  }
  return { ...job, userData };
}
