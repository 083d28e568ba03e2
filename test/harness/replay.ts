import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { readHistoryFiles, replayCheck, type NamedHistory, type ReplayCheckOptions } from '../../src/replay-check';

export type { NamedHistory };

/** Saved workflow histories, replayed by the unit tier against the current workflow code. */
export const SAVED_HISTORIES_DIR = resolve(__dirname, '..', 'fixtures', 'histories');

/**
 * Set to 1 to save the histories of an integration run (`test/integration/workflows/replay.test.ts`) that are not
 * saved yet, or to `all` to rewrite every one. Saved histories of older code stay as they are by default: they are
 * what proves that runs started before a patch still replay.
 */
export const RECORD_HISTORIES_ENV = 'SAPI_RECORD_HISTORIES';

/** Replays every history (as `sapi-temporal replay-check` does) and returns one line per failure (`<name>: <error>`). */
export async function replayFailures(options: ReplayCheckOptions, histories: NamedHistory[]): Promise<string[]> {
  return (await replayCheck(histories, options)).flatMap((v) => (v.problem ? [`${v.workflowId}: ${v.problem}`] : []));
}

/** The histories of these workflows as the server has them (the current run of each), under their workflow ids. */
export async function fetchHistories(handles: Record<string, WorkflowHandle>): Promise<NamedHistory[]> {
  return Promise.all(Object.entries(handles).map(async ([name, handle]) => ({ workflowId: name, history: await handle.fetchHistory() })));
}

/** Writes histories as `<name>.json` (the JSON form `temporal workflow show --output json` prints). */
export function saveHistories(histories: NamedHistory[], dir = SAVED_HISTORIES_DIR, overwrite = false): void {
  mkdirSync(dir, { recursive: true });
  for (const { workflowId, history } of histories) {
    const path = join(dir, `${workflowId}.json`);
    if (overwrite || !existsSync(path)) writeFileSync(path, `${historyToJSON(history)}\n`);
  }
}

/** The saved histories, named after their files. */
export function loadSavedHistories(dir = SAVED_HISTORIES_DIR): NamedHistory[] {
  return readHistoryFiles(dir);
}
