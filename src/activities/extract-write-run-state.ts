import type { ExtractRunState } from '../extractor/run-state';
import { saveRunState } from '../object-storage/run-state-store';
import { stageStoreOf } from '../object-storage/stage-store';
import type { ActivityDeps } from './deps';
import { asActivity } from './context';

export interface WriteRunStateInput {
  /** The configuration's state key (`ExtractInput.stateKey`). */
  stateKey: string;
  state: ExtractRunState;
}

/** Stores the run state of a configuration (replacing the previous one in one write). */
export function writeRunState(deps: ActivityDeps) {
  return (input: WriteRunStateInput): Promise<{ uri: string }> =>
    asActivity(async () => ({ uri: await saveRunState(stageStoreOf(deps), input.stateKey, input.state) }));
}
