import { SapiInvalidInputError } from '../errors';
import { stageStoreOf } from '../object-storage/stage-store';
import type { ActivityDeps } from './deps';
import { asActivity } from './context';
import { assertOwnRunKey } from './ownership';

export interface CleanStagingInput {
  /** The extraction's staging key (`<workflow id>/<first run id>`). */
  runKey: string;
}

export interface CleanStagingResult {
  /** Objects (page groups and built CSVs) removed. */
  removed: number;
  /** The prefix they were under, as other components address it. */
  prefix: string;
}

/**
 * Removes everything an extraction staged (its pages and the CSVs built from them) once its tables are loaded.
 * Idempotent: a retry lists what is left and removes that. The run state of a `stateKey` lives elsewhere and stays.
 * Only the asking run's own staging: another run's key is refused (`SAPI_INPUT_FORBIDDEN`) before anything is listed.
 */
export function cleanStaging(deps: ActivityDeps) {
  return (input: CleanStagingInput): Promise<CleanStagingResult> =>
    asActivity(async () => {
      if (!/^[^/]+\/[^/]+$/.test(input.runKey)) throw new SapiInvalidInputError(`cleanStaging: invalid runKey ${JSON.stringify(input.runKey)}`);
      await assertOwnRunKey(input.runKey, 'runKey');
      const store = stageStoreOf(deps);
      const prefix = `${input.runKey}/`;
      const keys = await store.list(prefix);
      await store.delete(keys);
      return { removed: keys.length, prefix: store.urlOf(prefix) };
    });
}
