import { SapiInvalidInputError } from '../errors';
import { isStateKey, parseRunState, runStateStoreKey, type ExtractRunState } from '../extractor/run-state';
import { readText, stageStoreOf } from '../object-storage/stage-store';
import type { ActivityDeps } from './deps';
import { asActivity } from './context';

export interface ReadRunStateInput {
  /** The configuration's state key (`ExtractInput.stateKey`). */
  stateKey: string;
}

export interface ReadRunStateResult {
  /** The stored state, `null` when this key has none yet. */
  state: ExtractRunState | null;
  /** Where it is (`s3://…` or a path on the worker's host). */
  uri: string;
}

/** The store key of a state key; an invalid one fails with `SAPI_INVALID_INPUT`. */
export function runStateKeyOf(stateKey: string): string {
  if (!isStateKey(stateKey)) {
    throw new SapiInvalidInputError(`stateKey must be 1-200 of [A-Za-z0-9._-] starting with a letter or digit, got ${JSON.stringify(stateKey)}`);
  }
  return runStateStoreKey(stateKey);
}

/** Reads the run state of a configuration from the stage store (`run-state/<stateKey>.json`); `null` when none. */
export function readRunState(deps: ActivityDeps) {
  return (input: ReadRunStateInput): Promise<ReadRunStateResult> =>
    asActivity(async () => {
      const key = runStateKeyOf(input.stateKey);
      const store = stageStoreOf(deps);
      if (!(await store.list(key)).includes(key)) return { state: null, uri: store.uriOf(key) };
      const text = await readText(store, key);
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch (err) {
        throw new SapiInvalidInputError(`the run state at ${store.uriOf(key)} is not JSON (${(err as Error).message}): fix or delete it`);
      }
      const parsed = parseRunState(json);
      if (!parsed.state) throw new SapiInvalidInputError(`the run state at ${store.uriOf(key)} is invalid: ${parsed.problems.join('; ')}`);
      return { state: parsed.state, uri: store.uriOf(key) };
    });
}

