// Small pure helpers of the extract workflow (sandbox-safe: no I/O, no clock): option defaults and checks, bucket
// and column names for Storage, job lookup, the progress cursor.
import { getPath } from '../extractor/path';
import type { ScrollerState } from '../extractor/scroller';
import { redactUrl } from '../http/redact';
import type { ExtractorConfig, JobConfig } from '../extractor/types';
import type { ExtractMode, ExtractOptions } from './extract';
import { receiptsOptionProblems } from './receipts';

/**
 * Default pages per batch activity: 5000, so that on fast APIs `batchSeconds` (10 s) usually ends a batch. Every page
 * is checkpointed by the activity's heartbeat whatever the batch size; a batch only bounds how often the workflow
 * sees progress and acts on `pause`/`cancel`. Each batch costs a workflow-task round trip (~30–80 ms on a small dev
 * server), which the design's 50 pages could not amortize: measured on 2 cores against the sample API, 50-page
 * batches ran at ≈ 0.3–0.5× the pages/s of the plain loop, 5000-page batches at ≈ 0.96× (`npm run bench -- extract`).
 */
export const DEFAULT_BATCH_PAGES = 5000;
/** Default seconds one batch keeps fetching. */
const DEFAULT_BATCH_SECONDS = 10;
/** Default heartbeat timeout of the page-fetching activity (ms). */
const DEFAULT_FETCH_HEARTBEAT_TIMEOUT_MS = 15_000;
/** Bucket used when neither `bucketId` nor `outputBucket` is given. */
const DEFAULT_EXTRACT_BUCKET = 'in.c-extractor';
/** Warnings kept in the result (the rest are counted). */
export const MAX_WARNINGS = 100;

/** Options with their defaults applied. */
export interface ResolvedExtractOptions {
  mode: ExtractMode;
  batchPages: number;
  batchSeconds: number;
  load: boolean;
  loadOnCancel: boolean;
  keepStaging: boolean;
  incremental: boolean;
  heartbeatTimeoutMs: number;
  continueAsNewAfterPages: number | null;
  loadConcurrency: number;
}

/** Tables an extraction loads at once by default (`options.loadConcurrency`). */
const DEFAULT_LOAD_CONCURRENCY = 4;

const positiveInt = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v > 0;

/** Applies the defaults; returns the problems found (each names the option and what it got). */
export function resolveExtractOptions(options: ExtractOptions = {}): { options: ResolvedExtractOptions; problems: string[] } {
  const problems: string[] = [];
  const check = (name: string, value: unknown, ok: boolean, want: string) => {
    if (value !== undefined && !ok) problems.push(`options.${name} must be ${want}, got ${JSON.stringify(value)}`);
  };
  check('mode', options.mode, options.mode === 'page' || options.mode === 'batch', '"page" or "batch"');
  check('batchPages', options.batchPages, positiveInt(options.batchPages), 'a positive integer');
  check('batchSeconds', options.batchSeconds, typeof options.batchSeconds === 'number' && options.batchSeconds > 0, 'a positive number');
  check(
    'heartbeatTimeoutMs',
    options.heartbeatTimeoutMs,
    positiveInt(options.heartbeatTimeoutMs) && (options.heartbeatTimeoutMs ?? 0) >= 1000,
    'an integer ≥ 1000',
  );
  check('continueAsNewAfterPages', options.continueAsNewAfterPages, positiveInt(options.continueAsNewAfterPages), 'a positive integer');
  check('loadConcurrency', options.loadConcurrency, positiveInt(options.loadConcurrency) && (options.loadConcurrency ?? 0) <= 100, 'an integer from 1 to 100');
  for (const flag of ['load', 'loadOnCancel', 'keepStaging', 'incremental'] as const)
    check(flag, options[flag], typeof options[flag] === 'boolean', 'true or false');
  problems.push(...receiptsOptionProblems(options.receipts, 'options.receipts'));
  if (options.bucketId !== undefined && !isBucketId(options.bucketId)) {
    problems.push(`options.bucketId must look like in.c-name or out.c-name, got ${JSON.stringify(options.bucketId)}`);
  }
  return {
    problems,
    options: {
      mode: options.mode ?? 'batch',
      batchPages: options.batchPages ?? DEFAULT_BATCH_PAGES,
      batchSeconds: options.batchSeconds ?? DEFAULT_BATCH_SECONDS,
      load: options.load ?? true,
      loadOnCancel: options.loadOnCancel ?? true,
      keepStaging: options.keepStaging ?? false,
      incremental: options.incremental ?? false,
      heartbeatTimeoutMs: options.heartbeatTimeoutMs ?? DEFAULT_FETCH_HEARTBEAT_TIMEOUT_MS,
      continueAsNewAfterPages: options.continueAsNewAfterPages ?? null,
      loadConcurrency: options.loadConcurrency ?? DEFAULT_LOAD_CONCURRENCY,
    },
  };
}

/** `in.c-name` / `out.c-name` with a Storage-safe name. */
export function isBucketId(value: string): boolean {
  return /^(in|out)\.c-[A-Za-z0-9_-]{1,96}$/.test(value);
}

/**
 * The bucket the tables land in: the option, else `outputBucket` as is when it is already a bucket id, else
 * `in.c-<outputBucket>` (characters Storage refuses become `_`), else {@link DEFAULT_EXTRACT_BUCKET}.
 */
export function extractBucketId(optionBucketId: string | undefined, outputBucket: string | null): string {
  if (optionBucketId !== undefined) return optionBucketId;
  if (outputBucket === null || outputBucket === '') return DEFAULT_EXTRACT_BUCKET;
  if (isBucketId(outputBucket)) return outputBucket;
  const name = outputBucket
    .replace(/^(in|out)\.c-/, '')
    .replace(/[^A-Za-z0-9_-]/g, '_')
    .slice(0, 96);
  return `in.c-${name || 'extractor'}`;
}

/**
 * Storage column names for a table's safe column names: Storage allows `[A-Za-z0-9_]` only (so `-` becomes `_`) and
 * compares names case-insensitively; a clash gets `_u0`, `_u1`, … like `columnNamesFor`.
 */
export function storageColumnNames(columns: readonly string[]): string[] {
  const used = new Set<string>();
  return columns.map((column) => {
    const base = column.replace(/[^A-Za-z0-9_]/g, '_').slice(0, 64) || 'column';
    let name = base;
    for (let i = 0; used.has(name.toLowerCase()); i++) name = `${base}_u${i}`;
    used.add(name.toLowerCase());
    return name;
  });
}

/** The config job with this id (`"0"`, `"0.1"`: second child of the first job). */
export function findJob(config: ExtractorConfig, id: string): JobConfig {
  let jobs = config.config.jobs;
  let found: JobConfig | undefined;
  for (const part of id.split('.')) {
    found = jobs.find((j) => j.id === (found ? `${found.id}.${part}` : part));
    if (!found) break;
    jobs = found.children;
  }
  if (!found || found.id !== id) throw new Error(`job '${id}' is not in the configuration`);
  return found;
}

/**
 * A short view of where the job run is: the value it sends next (or its URL with secret-looking query values
 * redacted, see `redactUrl`), at most 80 characters. `state.next` holds `${env:…}` references, never resolved
 * secrets; the redaction also covers a key given in clear by a configuration that slipped past the check.
 */
export function cursorOf(state: ScrollerState): string | null {
  const next = state.next;
  if (!next) return null;
  let value: unknown;
  const param = state.rules.queryParam;
  if (param !== null && state.pages > 0) {
    if (next.body?.kind === 'json') value = getPath(next.body.value, param).value;
    if (value === undefined) value = queryValue(next.url, param) ?? (next.body?.kind === 'form' ? queryValue(`?${next.body.value}`, param) : undefined);
  }
  const text = value === undefined ? redactUrl(next.url) : typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}…` : text;
}

function queryValue(url: string, name: string): string | undefined {
  const q = url.indexOf('?');
  if (q === -1) return undefined;
  for (const pair of url.slice(q + 1).split('&')) {
    const eq = pair.indexOf('=');
    const key = safeDecode(eq === -1 ? pair : pair.slice(0, eq));
    if (key === name) return safeDecode(eq === -1 ? '' : pair.slice(eq + 1));
  }
  return undefined;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

/** The staging key of one extraction: the workflow id made path-safe, and the first run id of the chain. */
export function stagingRunKey(workflowId: string, firstRunId: string): string {
  const safe = workflowId
    .replace(/[^A-Za-z0-9._-]/g, '_')
    .replace(/^\.+/, '_')
    .slice(0, 200);
  return `${safe}/${firstRunId}`;
}
