import type { ExtractRunState } from '../extractor/run-state';
import { stageStoreOf } from '../object-storage/stage-store';
import type { ActivityDeps } from './deps';
import { asActivity } from './context';
import { runStateKeyOf } from './extract-read-run-state';

export interface WriteRunStateInput {
  /** The configuration's state key (`ExtractInput.stateKey`). */
  stateKey: string;
  state: ExtractRunState;
}

/** Stores the run state of a configuration (replacing the previous one in one write). */
export function writeRunState(deps: ActivityDeps) {
  return (input: WriteRunStateInput): Promise<{ uri: string }> =>
    asActivity(async () => {
      const key = runStateKeyOf(input.stateKey);
      const store = stageStoreOf(deps);
      await store.put(key, `${JSON.stringify(input.state)}\n`);
      return { uri: store.uriOf(key) };
    });
}
