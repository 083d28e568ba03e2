/**
 * Run state between runs of one configuration: what the reference keeps in its `state.json`
 * (`{"time": {"previousStart": <unix s>}, "json_parser.struct": …, "json_parser.structVersion": …}`), so that
 * `{"time": "previousStart"}` in a request means "when the last successful run started".
 *
 * - A run reads the state at its start; `previousStart` is the stored one (0 when there is none, as in the
 *   reference), `currentStart` the run's start (workflow time), both in Unix seconds: {@link runTimesOf}.
 * - Only a run that loaded its tables writes the next state: {@link nextRunState} sets `previousStart` to this run's
 *   `currentStart` and keeps every other key as it was (the JSON parser's `json_parser.*` keys are opaque here).
 * - A reference `state.json` is a valid state as it is ({@link parseRunState}): importing it continues incrementally.
 *
 * Workflow-safe: pure, no clock (callers pass workflow time).
 */
import type { ExtractorConfig, ExtractRunTimes } from './types';

/** The stored state: the reference's `state.json` shape; keys other than `time` are carried as they are. */
export interface ExtractRunState {
  time: { previousStart: number };
  [key: string]: unknown;
}

/** The characters a state key may have (it names an object in the stage store). */
const STATE_KEY = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;

/** True for a usable state key: 1–200 of `[A-Za-z0-9._-]`, starting with a letter or digit. */
export function isStateKey(key: string): boolean {
  return STATE_KEY.test(key);
}

/** Where the state of `stateKey` lives in the stage store. */
export function runStateStoreKey(stateKey: string): string {
  return `run-state/${stateKey}.json`;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A state from JSON (a stored one, or a reference `state.json` being imported). `{}` is the empty state
 * (`previousStart` 0). Returns the problems instead when it is not one (each says where and what it got).
 */
export function parseRunState(json: unknown): { state: ExtractRunState; problems: [] } | { state: null; problems: string[] } {
  if (!isObject(json)) return { state: null, problems: [`the run state must be a JSON object, got ${JSON.stringify(json)?.slice(0, 60)}`] };
  const time = json.time ?? {};
  if (!isObject(time))
    return { state: null, problems: [`'time' must be an object like {"previousStart": 1492606006}, got ${JSON.stringify(time).slice(0, 60)}`] };
  const previous = time.previousStart ?? 0;
  if (typeof previous !== 'number' || !Number.isFinite(previous) || previous < 0) {
    return { state: null, problems: [`'time.previousStart' must be Unix seconds (a non-negative number), got ${JSON.stringify(previous)}`] };
  }
  return { state: { ...json, time: { ...time, previousStart: Math.floor(previous) } }, problems: [] };
}

/** This run's times: the stored `previousStart` (0 without a state) and `currentStartMs` in seconds. */
export function runTimesOf(state: ExtractRunState | null, currentStartMs: number): ExtractRunTimes {
  return { previousStart: state?.time.previousStart ?? 0, currentStart: Math.floor(currentStartMs / 1000) };
}

/** The state a successful run leaves: `previousStart` = this run's start; other keys kept (`extra` replaces some). */
export function nextRunState(previous: ExtractRunState | null, times: ExtractRunTimes, extra: Record<string, unknown> = {}): ExtractRunState {
  const { time, ...rest } = previous ?? { time: { previousStart: 0 } };
  const keptTime = Object.fromEntries(Object.entries(time).filter(([k]) => k !== 'currentStart'));
  return { ...rest, ...extra, time: { ...keptTime, previousStart: times.currentStart } };
}

/** The configuration with this run's times in `config.runTimes`, where request building reads them. */
export function withRunTimes(config: ExtractorConfig, runTimes: ExtractRunTimes): ExtractorConfig {
  return { ...config, config: { ...config.config, runTimes } };
}
