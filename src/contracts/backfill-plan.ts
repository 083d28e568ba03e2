// The windows of a backfill and what each child run gets: pure (no clock, no Node), shared by `backfillWorkflow`, the
// CLI and the typed client, so a window's bounds and its child's workflow id are the same wherever they are computed.
import {
  BACKFILL_CONFIG_KEY,
  DEFAULT_BACKFILL_PARALLEL,
  MAX_BACKFILL_PARALLEL,
  MAX_BACKFILL_WINDOWS,
  type BackfillExtractInput,
  type BackfillImportInput,
  type BackfillInput,
  type BackfillWindow,
} from './backfill';
import { civilFromDays } from '../extractor/php-time';
import type { ExtractInput } from './extract';
import type { ImportTableInput } from './transfer';

/** An ISO 8601 duration as calendar parts. */
interface WindowLength {
  years: number;
  months: number;
  days: number;
  hours: number;
  minutes: number;
  seconds: number;
}

const DURATION = /^P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$/;

/** `P7D`, `P1W`, `P1M`, `PT6H` as parts; null when it is not such a duration or is zero. */
export function parseWindowLength(text: string): WindowLength | null {
  const m = DURATION.exec(text.trim().toUpperCase());
  if (!m || /T$/.test(text.trim())) return null;
  const n = (i: number) => Number(m[i] ?? 0);
  const length = { years: n(1), months: n(2), days: n(3) * 7 + n(4), hours: n(5), minutes: n(6), seconds: n(7) };
  return Object.values(length).some((v) => v > 0) ? length : null;
}

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?(?:\.\d+)?Z$/;

/** `2025-01-01` (UTC midnight) or `2025-01-01T06:00:00Z` as ms since epoch; null when neither (or not a real date). */
function parseBound(text: string): number | null {
  const m = DATE_ONLY.exec(text) ?? DATE_TIME.exec(text);
  if (!m) return null;
  const [y, mo, d, h, mi, s] = [1, 2, 3, 4, 5, 6].map((i) => Number(m[i] ?? 0)) as [number, number, number, number, number, number];
  const ms = Date.UTC(y, mo - 1, d, h, mi, s);
  const back = partsOf(ms);
  // 2025-02-30 is not a date (Date.UTC would roll it over into March)
  if (back.year !== y || back.month !== mo || back.day !== d) return null;
  return ms;
}

/** Calendar parts (UTC) of ms since epoch, by arithmetic (workflow code constructs no `Date`). */
function partsOf(ms: number): { year: number; month: number; day: number; hours: number; minutes: number; seconds: number } {
  const days = Math.floor(ms / 86_400_000);
  const inDay = Math.floor((ms - days * 86_400_000) / 1000);
  return { ...civilFromDays(days), hours: Math.floor(inDay / 3600), minutes: Math.floor((inDay % 3600) / 60), seconds: inDay % 60 };
}

/** `start` moved by `times` × `length` in calendar terms (UTC). */
function shifted(start: number, length: WindowLength, times: number): number {
  const d = partsOf(start);
  return Date.UTC(
    d.year + length.years * times,
    d.month - 1 + length.months * times,
    d.day + length.days * times,
    d.hours + length.hours * times,
    d.minutes + length.minutes * times,
    d.seconds + length.seconds * times,
  );
}

/** A bound as the configuration gets it: `2025-01-01` when every bound of the backfill is a midnight, else `2025-01-01T06:00:00Z`. */
function boundText(ms: number, dateOnly: boolean): string {
  const p = partsOf(ms);
  const two = (n: number) => String(n).padStart(2, '0');
  const date = `${String(p.year).padStart(4, '0')}-${two(p.month)}-${two(p.day)}`;
  return dateOnly ? date : `${date}T${two(p.hours)}:${two(p.minutes)}:${two(p.seconds)}Z`;
}

/** `w0001` for window 0. */
function windowLabel(index: number): string {
  return `w${String(index + 1).padStart(4, '0')}`;
}

/** The workflow id of a window's child run: the backfill's id and the window's label (deterministic: a rerun finds it). */
export function windowWorkflowId(backfillId: string, window: Pick<BackfillWindow, 'label'>): string {
  return `${backfillId}-${window.label}`;
}

/** The date windows of an extraction's backfill, or the problems with its range (each names the field). */
export function dateWindows(input: Pick<BackfillExtractInput, 'from' | 'to' | 'window'>): { windows: BackfillWindow[]; problems: string[] } {
  const problems: string[] = [];
  const from = typeof input.from === 'string' ? parseBound(input.from) : null;
  const to = typeof input.to === 'string' ? parseBound(input.to) : null;
  const length = typeof input.window === 'string' ? parseWindowLength(input.window) : null;
  if (from === null) problems.push(`from must be a date (2025-01-01) or a UTC time (2025-01-01T06:00:00Z), got ${JSON.stringify(input.from)}`);
  if (to === null) problems.push(`to must be a date (2025-01-01) or a UTC time (2025-01-01T06:00:00Z), got ${JSON.stringify(input.to)}`);
  if (length === null) problems.push(`window must be an ISO 8601 duration above zero (P7D, P1W, P1M, PT6H), got ${JSON.stringify(input.window)}`);
  if (from === null || to === null || length === null) return { windows: [], problems };
  if (from >= to) return { windows: [], problems: [`from (${input.from}) must be before to (${input.to})`] };
  const dateOnly = DATE_ONLY.test(input.from) && DATE_ONLY.test(input.to) && length.hours + length.minutes + length.seconds === 0;
  const windows: BackfillWindow[] = [];
  for (let index = 0; ; index++) {
    const start = shifted(from, length, index);
    if (start >= to) break;
    if (index >= MAX_BACKFILL_WINDOWS)
      return {
        windows: [],
        problems: [`${input.from}..${input.to} in windows of ${input.window} is more than ${MAX_BACKFILL_WINDOWS} windows: use a longer window`],
      };
    const end = Math.min(shifted(from, length, index + 1), to);
    windows.push({ index, label: windowLabel(index), from: boundText(start, dateOnly), to: boundText(end, dateOnly) });
  }
  return { windows, problems };
}

/** The windows of any backfill (an import's: one per source), or the problems with its input (each names the field). */
export function backfillWindows(input: BackfillInput): { windows: BackfillWindow[]; problems: string[] } {
  const problems = commonProblems(input);
  if (input.kind === 'extract') {
    problems.push(...extractProblems(input));
    const planned = dateWindows(input);
    return { windows: problems.length ? [] : planned.windows, problems: [...problems, ...planned.problems] };
  }
  if (input.kind === 'import') {
    problems.push(...importProblems(input));
    if (problems.length) return { windows: [], problems };
    return { windows: input.sources.map((source, index) => ({ index, label: windowLabel(index), source })), problems };
  }
  return { windows: [], problems: [`kind must be "extract" or "import", got ${JSON.stringify((input as { kind?: unknown }).kind)}`] };
}

function commonProblems(input: BackfillInput): string[] {
  const problems: string[] = [];
  const { parallel, continueAsNewAfterWindows } = input;
  if (parallel !== undefined && !(Number.isSafeInteger(parallel) && parallel >= 1 && parallel <= MAX_BACKFILL_PARALLEL)) {
    problems.push(`parallel must be a whole number from 1 to ${MAX_BACKFILL_PARALLEL}, got ${JSON.stringify(parallel)}`);
  }
  if (continueAsNewAfterWindows !== undefined && !(Number.isSafeInteger(continueAsNewAfterWindows) && continueAsNewAfterWindows >= 1)) {
    problems.push(`continueAsNewAfterWindows must be a whole number ≥ 1, got ${JSON.stringify(continueAsNewAfterWindows)}`);
  }
  return problems;
}

function extractProblems(input: BackfillExtractInput): string[] {
  const problems: string[] = [];
  const extract = input.extract as Partial<ExtractInput> | undefined;
  if (typeof extract !== 'object' || extract === null || extract.config === undefined)
    return ['extract must be an extraction input ({config, options?, stateKey?})'];
  if (extract.importState !== undefined)
    problems.push('extract.importState is not supported by a backfill: its windows never read a run state (the bounds come from parameters.config.backfill)');
  if (input.advanceState && extract.stateKey === undefined) problems.push('advanceState needs extract.stateKey (the live run state to advance)');
  const config = extract.config as { parameters?: { config?: unknown } } | null;
  const params = typeof config === 'object' && config !== null ? config.parameters : undefined;
  if (typeof params !== 'object' || params === null || typeof params.config !== 'object' || params.config === null) {
    problems.push('extract.config must be a Generic-Extractor configuration ({"parameters": {"api": …, "config": …}})');
  } else if (extract.options?.incremental !== true && (params.config as { incrementalOutput?: unknown }).incrementalOutput !== true) {
    // every window loads into the same tables: a replacing load would keep only the last window's rows
    problems.push(
      'a backfill loads every window into the same tables: set extract.options.incremental (CLI --incremental) or incrementalOutput: true in the configuration',
    );
  }
  return problems;
}

function importProblems(input: BackfillImportInput): string[] {
  const problems: string[] = [];
  const template = input.import as Partial<ImportTableInput> | undefined;
  if (typeof template !== 'object' || template === null) return ['import must be an import input without source ({bucketId, table, incremental: true, …})'];
  for (const field of ['source', 'slices', 'sourceGrant'] as const) {
    if (template[field] !== undefined) problems.push(`import.${field} is not supported by a backfill: list the files in sources`);
  }
  // every source loads into the same table at once: a replacing load would keep only the last one's rows
  if (template.incremental !== true)
    problems.push('import.incremental must be true: every source loads into the same table, and a full load would replace the rows of the others');
  if (template.mode === 'create')
    problems.push(
      'import.mode create is not supported by a backfill (its sources load in parallel into one table): create the table first, then backfill with mode load',
    );
  if (!Array.isArray(input.sources) || input.sources.length === 0 || input.sources.some((s) => typeof s !== 'string' || s === '')) {
    problems.push('sources must be a non-empty list of files or URLs');
  } else if (input.sources.length > MAX_BACKFILL_WINDOWS) {
    problems.push(`sources has ${input.sources.length} entries; a backfill takes at most ${MAX_BACKFILL_WINDOWS}`);
  } else if (new Set(input.sources).size !== input.sources.length) {
    problems.push('sources lists a file twice: its rows would be loaded twice');
  }
  return problems;
}

/** Child runs going at once: the input's, else {@link DEFAULT_BACKFILL_PARALLEL}. */
export function parallelOf(input: BackfillInput): number {
  return input.parallel ?? DEFAULT_BACKFILL_PARALLEL;
}

/** Unix seconds of a bound (`from`/`to` of a window). */
export function boundSeconds(bound: string): number {
  return Math.floor((parseBound(bound) ?? 0) / 1000);
}

/**
 * The input of a window's `extractWorkflow`: the extraction's, with the window's bounds in `parameters.config.backfill`
 * (`from`, `to`, and `fromTimestamp`/`toTimestamp` in Unix seconds), and without `stateKey`/`importState`: a window
 * neither reads nor writes the live run state.
 */
export function windowExtractInput(extract: ExtractInput, window: BackfillWindow): ExtractInput {
  const { stateKey: _live, importState: _imported, ...rest } = extract;
  const config = extract.config as { parameters: { config: Record<string, unknown> } & Record<string, unknown> } & Record<string, unknown>;
  const bounds = { from: window.from!, to: window.to!, fromTimestamp: boundSeconds(window.from!), toTimestamp: boundSeconds(window.to!) };
  return {
    ...rest,
    config: { ...config, parameters: { ...config.parameters, config: { ...config.parameters.config, [BACKFILL_CONFIG_KEY]: bounds } } },
  };
}

/** The input of a source's `importTableWorkflow`. */
export function windowImportInput(template: BackfillImportInput['import'], window: BackfillWindow): ImportTableInput {
  return { ...template, source: window.source! };
}
