// Priority and fairness of the plugin's runs (Temporal task queue priority): what a caller may set, what the
// workflows default to, and the checks both the CLI and the typed client apply.
import type { Priority } from '@temporalio/common';
import type { ExtractInput } from './extract';
import { hostOf } from './search-attributes';

/** Highest priority (runs first) and lowest, as the server's default `matching.priorityLevels` (5) allows. */
export const PRIORITY_HIGHEST = 1;
export const PRIORITY_LOWEST = 5;
/** A schedule's runs default to this priority: ahead of ad-hoc runs (the server's default, 3) and backfills. */
export const SCHEDULED_PRIORITY = 2;
/** The server's limit on a fairness key. */
const MAX_FAIRNESS_KEY_BYTES = 64;

/**
 * The fairness key a run's activities use when the run was started without one: the Storage connection for imports
 * and exports (`storage:<connection>`), the extracted API's host for extractions (`api:<host>`), so one tenant's or
 * one API's backlog cannot starve the others on a shared task queue. Cut to {@link MAX_FAIRNESS_KEY_BYTES}.
 */
export function defaultFairnessKey(
  run: { operation: 'import' | 'export'; connection?: string } | { operation: 'extract'; input: ExtractInput },
): string | undefined {
  const key =
    run.operation === 'extract'
      ? ((host) => (host ? `api:${host}` : undefined))(
          hostOf((run.input.config as { parameters?: { api?: { baseUrl?: unknown } } } | undefined)?.parameters?.api?.baseUrl),
        )
      : `storage:${typeof run.connection === 'string' && run.connection !== '' ? run.connection : 'default'}`;
  return key === undefined ? undefined : cutToBytes(key, MAX_FAIRNESS_KEY_BYTES);
}

/** What is wrong with a priority a caller gave (empty when nothing): key 1–5, fairness key ≤ 64 bytes, weight 0.001–1000. */
export function priorityProblems(priority: Priority): string[] {
  const problems: string[] = [];
  const key = priority.priorityKey;
  if (key !== undefined && (!Number.isInteger(key) || key < PRIORITY_HIGHEST || key > PRIORITY_LOWEST)) {
    problems.push(`priority must be an integer from ${PRIORITY_HIGHEST} (first) to ${PRIORITY_LOWEST} (last), got ${key}`);
  }
  if (priority.fairnessKey !== undefined && (priority.fairnessKey === '' || byteLength(priority.fairnessKey) > MAX_FAIRNESS_KEY_BYTES)) {
    problems.push(`fairness key must be 1 to ${MAX_FAIRNESS_KEY_BYTES} bytes, got ${byteLength(priority.fairnessKey)}`);
  }
  const weight = priority.fairnessWeight;
  if (weight !== undefined && !(Number.isFinite(weight) && weight >= 0.001 && weight <= 1000)) {
    problems.push(`fairness weight must be a number from 0.001 to 1000, got ${weight}`);
  }
  return problems;
}

/** UTF-8 length of `text` (workflow-safe: no TextEncoder in the contracts). */
function byteLength(text: string): number {
  let bytes = 0;
  for (const char of text) {
    const code = char.codePointAt(0)!;
    bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
  }
  return bytes;
}

/** `text` cut to at most `max` UTF-8 bytes, never inside a character. */
function cutToBytes(text: string, max: number): string {
  const chars = [...text];
  while (byteLength(chars.join('')) > max) chars.pop();
  return chars.join('');
}
