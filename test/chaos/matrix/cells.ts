/**
 * The fault matrix, as data: operation × step (the activity whose boundary is hit) × boundary × fault kind. Each
 * cell says how the fault is injected and what end state it must reach; cells that make no sense are listed with
 * the reason, so the summary shows the whole matrix. The runner (test/harness/matrix/runner.ts) interprets them.
 */

export type Operation = 'import-direct' | 'import-small' | 'import-importer' | 'import-sliced' | 'export-sliced' | 'extract';
export type Boundary = 'before' | 'mid' | 'after';
export type FaultKind = 'worker-kill' | 'temporal-restart' | 'sapi-5xx' | 'sapi-429' | 'drop-after-commit' | 's3-outage';

export const OPERATIONS: Operation[] = ['import-direct', 'import-small', 'import-importer', 'import-sliced', 'export-sliced', 'extract'];
export const BOUNDARIES: Boundary[] = ['before', 'mid', 'after'];
export const FAULTS: FaultKind[] = ['worker-kill', 'temporal-restart', 'sapi-5xx', 'sapi-429', 'drop-after-commit', 's3-outage'];

/** Which proxy sees the step's requests: the Storage API emulator, object storage (MinIO) or the extracted API. */
export type Service = 'sapi' | 's3' | 'api';

/** One request, as the gate (test/harness/matrix/gate.ts) sees it. `nth` counts matches from the cell's start (1-based). */
export interface RequestMatch {
  service: Service;
  method?: string;
  path: RegExp;
  query?: RegExp;
  nth?: number | 'last-of-baseline';
}

/**
 * A point in a step where the fault strikes:
 * - `request`: the request is stopped before the service sees it;
 * - `in-flight`: the service has the request and is working on it (the emulator delays it `delayMs`);
 * - `response`: the service did the work and answered; the answer is stopped before the client gets it.
 */
export interface Trigger {
  at: RequestMatch;
  phase: 'request' | 'in-flight' | 'response';
}

/** What the fault does at its trigger. */
export type Injection =
  /** SIGKILL the worker process that sent the request; the stopped request is dropped; a standby worker takes over. */
  | { kind: 'kill-worker'; trigger: Trigger }
  /** SIGKILL the Temporal server, let the request carry on, start the server again on the same port. */
  | { kind: 'restart-temporal'; trigger: Trigger }
  /** An emulator fault rule (`EmulatorHandle.faults.add`) on the step's request. */
  | { kind: 'emulator-rule'; method: string; path: RegExp; action: EmulatorAction; times: number }
  /** The proxy answers 504 after `afterMs` while the emulator (delayed) still performs the request. */
  | { kind: 'gateway-timeout'; at: RequestMatch; afterMs: number }
  /** Object storage unreachable for `ms` from the trigger on (the stopped request and open connections are cut). */
  | { kind: 's3-outage'; trigger: Trigger; ms: number };

export type EmulatorAction =
  { type: 'status'; status: number; retryAfter?: number } | { type: 'dropResponse' } | { type: 'status-after-success'; status?: number };

export interface Step {
  operation: Operation;
  /** Short name used in cell ids. */
  name: string;
  /** The activity whose boundary the cells hit. */
  activity: string;
  /** The step's request to the Storage API (for emulator faults), if it has one. */
  sapi?: { method: string; path: RegExp; query?: RegExp; commits: boolean };
  /** The step's object-storage requests: the first, one in the middle (none for a one-request upload), the one that commits. */
  s3?: { first: RequestMatch; mid?: RequestMatch; commit?: RequestMatch };
  /** The extracted API's requests (extraction only). */
  api?: { first: RequestMatch; mid: RequestMatch; last: RequestMatch };
}

export interface Expectation {
  /** `success`, or the failure type the workflow must end with (then nothing it created may be left). */
  outcome: 'success' | { failure: string };
}

export interface Cell {
  id: string;
  operation: Operation;
  step: string;
  activity: string;
  boundary: Boundary;
  fault: FaultKind;
  /** Absent when not applicable (then `na` says why). */
  inject?: Injection;
  na?: string;
  expect: Expectation;
  /** The storage job of this cell's operation fails (emulator `failJob`): the cell checks the clean-up. */
  jobFails?: boolean;
  /** In the default (subset) run. */
  subset?: boolean;
  /** A sliced upload that creates its table (`mode: create`) instead of loading into an existing one. */
  createsTable?: boolean;
}

const sapi = (method: string, path: RegExp, extra: Partial<RequestMatch> = {}): RequestMatch => ({ service: 'sapi', method, path, ...extra });
const s3 = (method: string | undefined, path: RegExp, extra: Partial<RequestMatch> = {}): RequestMatch => ({ service: 's3', method, path, ...extra });

const BUCKETS = /^\/v2\/storage\/buckets$/;
const PREPARE = /^\/v2\/storage\/files\/prepare$/;
const TABLES_ASYNC = /^\/v2\/storage\/buckets\/[^/]+\/tables-async$/;
const IMPORT_ASYNC = /^\/v2\/storage\/tables\/[^/]+\/import-async$/;
const EXPORT_ASYNC = /^\/v2\/storage\/tables\/[^/]+\/export-async$/;
const IMPORTER = /^\/import\/upload-file$/;
const FILE_DETAIL = /^\/v2\/storage\/files\/\d+$/;
const ANY = /.*/;

/** The steps of each operation whose boundaries the matrix hits (the steps that create or move something). */
export const STEPS: Step[] = [
  // since the short path (import-short-path-v1) the bucket and the prepare are steps of prepareImport
  { operation: 'import-direct', name: 'bucket', activity: 'prepareImport (bucket)', sapi: { method: 'POST', path: BUCKETS, commits: true } },
  { operation: 'import-direct', name: 'prepare', activity: 'prepareImport (prepare)', sapi: { method: 'POST', path: PREPARE, commits: true } },
  {
    operation: 'import-direct',
    name: 'upload',
    activity: 'uploadFile',
    s3: {
      first: s3('POST', ANY, { query: /(^|&)uploads(=|&|$)/ }),
      mid: s3('PUT', ANY, { query: /partNumber=2(&|$)/ }),
      commit: s3('POST', ANY, { query: /uploadId=/ }),
    },
  },
  { operation: 'import-direct', name: 'job', activity: 'createTableAsync', sapi: { method: 'POST', path: TABLES_ASYNC, commits: true } },
  // a small source takes the short path: checks, bucket and prepare in prepareImport (the same requests as the direct
  // import's bucket and prepare steps, hit there), then one PutObject, tables-async and the first polls in one activity
  { operation: 'import-small', name: 'upload', activity: 'uploadAndStartJob', s3: { first: s3('PUT', ANY), commit: s3('PUT', ANY) } },
  { operation: 'import-small', name: 'job', activity: 'uploadAndStartJob', sapi: { method: 'POST', path: TABLES_ASYNC, commits: true } },
  { operation: 'import-importer', name: 'upload', activity: 'uploadViaImporter', sapi: { method: 'POST', path: IMPORTER, commits: true } },
  { operation: 'import-importer', name: 'job', activity: 'loadTableAsync', sapi: { method: 'POST', path: IMPORT_ASYNC, commits: true } },
  {
    operation: 'import-sliced',
    name: 'upload',
    activity: 'uploadSlices',
    s3: { first: s3('PUT', ANY), mid: s3('PUT', /part_00001$/), commit: s3('PUT', /manifest$/) },
  },
  // sliced uploads load into an existing table (import-async with columns); creating a table from one is the
  // `import-sliced/baseline-create` cell
  { operation: 'import-sliced', name: 'job', activity: 'loadTableAsync', sapi: { method: 'POST', path: IMPORT_ASYNC, commits: true } },
  { operation: 'export-sliced', name: 'job', activity: 'exportTableAsync', sapi: { method: 'POST', path: EXPORT_ASYNC, commits: true } },
  {
    operation: 'export-sliced',
    name: 'download',
    activity: 'downloadFile',
    sapi: { method: 'GET', path: FILE_DETAIL, query: /federationToken=/, commits: false },
    s3: { first: s3('GET', ANY), mid: s3('GET', ANY, { nth: 3 }), commit: s3('GET', ANY, { nth: 'last-of-baseline' }) },
  },
  {
    operation: 'extract',
    name: 'fetch',
    activity: 'fetchPages',
    api: {
      first: { service: 'api', method: 'GET', path: /\/large\/items$/ },
      mid: { service: 'api', method: 'GET', path: /\/large\/items$/, nth: 2 },
      last: { service: 'api', method: 'GET', path: /\/large\/items$/, nth: 'last-of-baseline' },
    },
    s3: { first: s3(undefined, ANY), mid: s3('PUT', ANY, { nth: 2 }) },
  },
  { operation: 'extract', name: 'load', activity: 'createTableAsync (child importTable)', sapi: { method: 'POST', path: TABLES_ASYNC, commits: true } },
];

/**
 * How long object storage stays unreachable in an outage cell (ms): 6 s, or `SAPI_S3_OUTAGE_MS` (`make test-outages`
 * runs the upload and download outage cells with the long outage's length).
 */
export const S3_OUTAGE_MS = Number(process.env.SAPI_S3_OUTAGE_MS ?? '') > 0 ? Number(process.env.SAPI_S3_OUTAGE_MS) : 6_000;
/** How long the emulator works on an in-flight request before performing it (ms). */
export const IN_FLIGHT_DELAY_MS = 2_000;

/** The trigger of a process fault (kill, restart) at a boundary of a step, or why there is none. */
function processTrigger(step: Step, boundary: Boundary): Trigger | string {
  if (step.api) {
    if (boundary === 'before') return { at: step.api.first, phase: 'request' };
    if (boundary === 'mid') return { at: step.api.mid, phase: 'response' };
    return { at: step.api.last, phase: 'response' };
  }
  if (step.s3) {
    if (boundary === 'before') return { at: step.s3.first, phase: 'request' };
    if (boundary === 'mid') return step.s3.mid ? { at: step.s3.mid, phase: 'response' } : 'one PutObject: the upload has no middle';
    return step.s3.commit ? { at: step.s3.commit, phase: 'response' } : 'no commit on object storage in this step';
  }
  const at = sapi(step.sapi!.method, step.sapi!.path, { query: step.sapi!.query });
  return { at, phase: boundary === 'before' ? 'request' : boundary === 'mid' ? 'in-flight' : 'response' };
}

function injectionFor(step: Step, boundary: Boundary, fault: FaultKind): Injection | string {
  const req = step.sapi;
  switch (fault) {
    case 'worker-kill': {
      const trigger = processTrigger(step, boundary);
      return typeof trigger === 'string' ? trigger : { kind: 'kill-worker', trigger };
    }
    case 'temporal-restart': {
      const trigger = processTrigger(step, boundary);
      return typeof trigger === 'string' ? trigger : { kind: 'restart-temporal', trigger };
    }
    case 'sapi-5xx':
      if (!req)
        return step.api
          ? 'the step talks to the extracted API and object storage, not to the Storage API'
          : 'the step talks to object storage only (its Storage calls are other steps)';
      if (boundary === 'before') return { kind: 'emulator-rule', method: req.method, path: req.path, action: { type: 'status', status: 502 }, times: 1 };
      if (boundary === 'mid') return { kind: 'gateway-timeout', at: sapi(req.method, req.path, { query: req.query }), afterMs: 500 };
      return { kind: 'emulator-rule', method: req.method, path: req.path, action: { type: 'status-after-success', status: 500 }, times: 1 };
    case 'sapi-429':
      if (!req)
        return step.api
          ? 'the step talks to the extracted API and object storage, not to the Storage API'
          : 'the step talks to object storage only (its Storage calls are other steps)';
      if (boundary !== 'before') return 'the service decides a 429 before it performs anything: only "before" exists';
      return { kind: 'emulator-rule', method: req.method, path: req.path, action: { type: 'status', status: 429, retryAfter: 2 }, times: 2 };
    case 'drop-after-commit':
      if (!req)
        return step.api
          ? 'the step talks to the extracted API and object storage, not to the Storage API'
          : 'the step talks to object storage only (its Storage calls are other steps)';
      if (boundary !== 'after') return 'a response can only be dropped after the service handled the request: only "after" exists';
      return { kind: 'emulator-rule', method: req.method, path: req.path, action: { type: 'dropResponse' }, times: 1 };
    case 's3-outage': {
      if (!step.s3)
        return step.operation === 'import-importer'
          ? 'the importer stores the file itself: the worker never talks to object storage'
          : 'the step does not touch object storage';
      const trigger = processTrigger(step, boundary);
      return typeof trigger === 'string' ? trigger : { kind: 's3-outage', trigger, ms: S3_OUTAGE_MS };
    }
  }
}

/** The representative subset of the default run: every fault kind and every operation at least once. */
export const SUBSET = new Set<string>([
  'import-direct/baseline',
  'import-direct/bucket/after/sapi-5xx', // a 500 after the bucket was created: ensureBucket must adopt it
  'import-direct/bucket/before/sapi-5xx', // a single 502 on POST buckets (known defect: SAPI_NOT_FOUND)
  'import-direct/job/mid/worker-kill', // SIGKILL while tables-async is being performed
  'import-direct/upload/mid/s3-outage',
  'import-importer/upload/after/drop-after-commit',
  'import-importer/job/before/sapi-429',
  'import-sliced/upload/mid/worker-kill',
  'import-sliced/job/after/temporal-restart',
  'export-sliced/job/before/sapi-5xx', // a 502 on export-async: must not adopt an older export with other parameters
  'export-sliced/download/mid/s3-outage',
  'export-sliced/job/after/drop-after-commit',
  'extract/fetch/mid/worker-kill',
  'extract/load/after/sapi-5xx',
  'import-small/job/mid/worker-kill', // SIGKILL while tables-async is performed inside uploadAndStartJob
  'import-small/upload/after/temporal-restart',
]);

function buildCells(): Cell[] {
  const cells: Cell[] = [];
  for (const operation of OPERATIONS) {
    const id = `${operation}/baseline`;
    cells.push({
      id,
      operation,
      step: '-',
      activity: '-',
      boundary: 'before',
      fault: 'worker-kill',
      expect: { outcome: 'success' },
      subset: SUBSET.has(id),
      na: undefined,
      inject: undefined,
    });
    for (const step of STEPS.filter((s) => s.operation === operation)) {
      for (const fault of FAULTS) {
        for (const boundary of BOUNDARIES) {
          const cellId = `${operation}/${step.name}/${boundary}/${fault}`;
          const inject = injectionFor(step, boundary, fault);
          cells.push({
            id: cellId,
            operation,
            step: step.name,
            activity: step.activity,
            boundary,
            fault,
            inject: typeof inject === 'string' ? undefined : inject,
            na: typeof inject === 'string' ? inject : undefined,
            expect: { outcome: 'success' },
            subset: SUBSET.has(cellId),
          });
        }
      }
    }
  }
  // creating a table from a sliced (headerless) upload, with `columns`
  cells.push({
    id: 'import-sliced/baseline-create',
    operation: 'import-sliced',
    step: '-',
    activity: '-',
    boundary: 'before',
    fault: 'worker-kill',
    expect: { outcome: 'success' },
    createsTable: true,
    subset: true,
  });
  // imports whose job fails after its answer was lost: the workflow fails and leaves nothing behind
  for (const operation of ['import-direct', 'import-small', 'import-importer', 'import-sliced'] as const) {
    const step = STEPS.find((s) => s.operation === operation && s.name === 'job')!;
    const id = `${operation}/job/after/drop-after-commit+job-fails`;
    cells.push({
      id,
      operation,
      step: step.name,
      activity: step.activity,
      boundary: 'after',
      fault: 'drop-after-commit',
      inject: { kind: 'emulator-rule', method: step.sapi!.method, path: step.sapi!.path, action: { type: 'dropResponse' }, times: 1 },
      expect: { outcome: { failure: 'SAPI_JOB_FAILED' } },
      jobFails: true,
      subset: operation === 'import-direct' || operation === 'import-small',
    });
  }
  return cells;
}

/** Every cell of the matrix; a baseline (no fault) per operation first. */
export const CELLS: Cell[] = buildCells();

export const isBaseline = (cell: Cell) => cell.step === '-';

/**
 * The cells of one operation for this run: all of them with SAPI_FAULT_MATRIX=full, the cells whose id matches with
 * SAPI_FAULT_MATRIX=/regex/ (e.g. `/prepare\/mid/`, to re-run a few), the subset otherwise.
 */
export function cellsFor(operation: Operation, mode = process.env.SAPI_FAULT_MATRIX): Cell[] {
  const pattern = mode && /^\/.+\/$/.test(mode) ? new RegExp(mode.slice(1, -1)) : undefined;
  return CELLS.filter((c) => c.operation === operation).filter((c) =>
    pattern ? pattern.test(c.id) || isBaseline(c) : mode === 'full' || c.subset || c.na !== undefined || isBaseline(c),
  );
}
