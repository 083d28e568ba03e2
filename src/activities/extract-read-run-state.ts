import type { ExtractRunState } from '../extractor/run-state';
import { loadRunState, runStateKeyOf } from '../object-storage/run-state-store';
import { stageStoreOf } from '../object-storage/stage-store';
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

/** Reads the run state of a configuration from the stage store (`run-state/<stateKey>.json`); `null` when none. */
export function readRunState(deps: ActivityDeps) {
  return (input: ReadRunStateInput): Promise<ReadRunStateResult> =>
    asActivity(async () => {
      const store = stageStoreOf(deps);
      return { state: await loadRunState(store, input.stateKey), uri: store.urlOf(runStateKeyOf(input.stateKey)) };
    });
}
