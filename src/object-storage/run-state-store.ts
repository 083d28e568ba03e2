/**
 * The run state of a configuration in the stage store (`run-state/<stateKey>.json`, see `extractor/run-state.ts`):
 * read, write, delete. Used by the extraction's activities and by `sapi-temporal extract-state`.
 */
import { SapiInvalidInputError } from '../errors';
import { isStateKey, parseRunState, runStateStoreKey, type ExtractRunState } from '../extractor/run-state';
import { type ObjectStore } from './object-store';
import { readText } from './stage-store';

/** The store key of a state key; an invalid one fails with `SAPI_INVALID_INPUT`. */
export function runStateKeyOf(stateKey: string): string {
  if (!isStateKey(stateKey)) {
    throw new SapiInvalidInputError(`stateKey must be 1-200 of [A-Za-z0-9._-] starting with a letter or digit, got ${JSON.stringify(stateKey)}`);
  }
  return runStateStoreKey(stateKey);
}

/** The stored state of `stateKey` (`null` when none); an unreadable one fails with `SAPI_INVALID_INPUT` saying where. */
export async function loadRunState(store: ObjectStore, stateKey: string): Promise<ExtractRunState | null> {
  const key = runStateKeyOf(stateKey);
  if (!(await store.list(key)).includes(key)) return null;
  const text = await readText(store, key);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new SapiInvalidInputError(`the run state at ${store.urlOf(key)} is not JSON (${(err as Error).message}): fix or delete it`);
  }
  const parsed = parseRunState(json);
  if (!parsed.state) throw new SapiInvalidInputError(`the run state at ${store.urlOf(key)} is invalid: ${parsed.problems.join('; ')}`);
  return parsed.state;
}

/** Stores the state of `stateKey` (one write, replacing the previous one); returns where it is. */
export async function saveRunState(store: ObjectStore, stateKey: string, state: ExtractRunState): Promise<string> {
  const key = runStateKeyOf(stateKey);
  await store.put(key, `${JSON.stringify(state)}\n`);
  return store.urlOf(key);
}

/** Deletes the state of `stateKey` (the next run starts with previousStart 0); returns where it was. */
export async function deleteRunState(store: ObjectStore, stateKey: string): Promise<string> {
  const key = runStateKeyOf(stateKey);
  await store.delete([key]);
  return store.urlOf(key);
}
