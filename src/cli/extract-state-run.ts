import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadSettings } from '../config';
import { SapiInvalidInputError } from '../errors';
import { parseRunState } from '../extractor/run-state';
import { deleteRunState, loadRunState, saveRunState } from '../object-storage/run-state-store';
import { createS3Client } from '../object-storage/s3-client';
import { createStageStore, type StageStore } from '../object-storage/stage-store';

/** The workers' stage store as the environment names it (`SAPI_STAGING_URL`, S3 keys from the AWS variables). */
export function stageStoreFromEnv(env: NodeJS.ProcessEnv): StageStore {
  const settings = loadSettings(env);
  const { endpoint, region, accessKeyId, secretAccessKey } = settings.s3;
  return createStageStore(settings.stagingUrl, () => {
    const s3 = createS3Client({ endpoint, region });
    if (accessKeyId && secretAccessKey) s3.config.credentials = async () => ({ accessKeyId, secretAccessKey });
    return s3;
  });
}

/** What `extract-state` does: show the stored state, delete it, or store a given one (a reference `state.json`). */
export async function runStateCommand(store: StageStore, op: 'show' | 'reset' | 'import', stateKey: string, file?: string): Promise<string> {
  if (op === 'show') {
    const state = await loadRunState(store, stateKey);
    return state ? JSON.stringify(state, null, 2) : `no run state stored for '${stateKey}' (the next run starts with previousStart 0)`;
  }
  if (op === 'reset') return `deleted ${await deleteRunState(store, stateKey)}: the next run of '${stateKey}' starts with previousStart 0`;
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(resolve(file ?? ''), 'utf8'));
  } catch (err) {
    throw new SapiInvalidInputError(`cannot read the state ${file ?? ''}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const parsed = parseRunState(json);
  if (!parsed.state) throw new SapiInvalidInputError(`${file ?? ''}: ${parsed.problems.join('; ')}`);
  return `stored ${await saveRunState(store, stateKey, parsed.state)}: the next run of '${stateKey}' starts with previousStart ${parsed.state.time.previousStart}`;
}
