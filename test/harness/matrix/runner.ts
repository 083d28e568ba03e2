import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import {
  CELLS,
  IN_FLIGHT_DELAY_MS,
  S3_OUTAGE_MS,
  STEPS,
  cellsFor,
  isBaseline,
  type Cell,
  type Injection,
  type Operation,
  type RequestMatch,
  type Step,
  type Trigger,
} from '../../chaos/matrix/cells';
import type { ExportTableResult, ImportTableResult } from '../../../src/contracts/transfer';
import type { ExtractResult } from '../../../src/contracts/extract';
import { testStack } from '../stack-state';
import { bucketExists, creatingRequests, csvRows, listFiles, listJobs, receiptsWhere, rowsChecksum, tableExists, tableRows, writeRows } from './checks';
import { EXTRACT_PAGES, startMatrixFixture, type MatrixFixture } from './fixture';
import { largePage } from '../../../src/sample-api';
import type { Gate, GateMatch, Held } from './gate';
import { formatSummary, readAllResults, writeOperationResults, type CellResult } from './summary';

/** Longest a cell's workflow may take after the fault (the product aims at ~30 s after a worker SIGKILL). */
/** How long a cell's run may take after its fault struck: 150 s beyond an object-storage outage's length. */
export const CELL_RESULT_TIMEOUT_MS = 150_000 + S3_OUTAGE_MS;
const POLLING = { initialMs: 300, maxMs: 1000 };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

/** The failure type (our error code) anywhere in a failure's cause chain. */
export function failureType(err: unknown): string | undefined {
  for (let e = err as { type?: unknown; cause?: unknown } | undefined; e; e = e.cause as typeof e) {
    if (typeof e.type === 'string' && e.type) return e.type;
  }
  return undefined;
}

function failureText(err: unknown): string {
  const parts: string[] = [];
  for (let e = err as { message?: string; cause?: unknown } | undefined; e; e = e.cause as typeof e) if (e.message) parts.push(e.message);
  return parts.join(' <- ');
}

/** One run of an operation: its workflow and the checks of its end state. */
interface OperationRun {
  workflow: string;
  args: unknown[];
  tableId: string;
  /** Storage job operation and the path of the requests that create it. */
  jobOperation: 'tableCreate' | 'tableImport' | 'tableExport';
  jobPath: RegExp;
  verify(result: unknown): Promise<void>;
  verifyFailed(): Promise<void>;
}

/** Per-file state of an operation: sources, expected checksums, what the baseline counted. */
interface OperationState {
  expectedChecksum: string;
  expectedRows: number;
  /** Counts of `last-of-baseline` matches, by matcher key. */
  baselineCounts: Map<string, number>;
  build(n: number, cell: Cell): Promise<OperationRun>;
}

const matchKey = (m: RequestMatch) => `${m.service}:${m.method ?? '*'}:${m.path.source}:${m.query?.source ?? ''}`;
const matches = (m: RequestMatch, r: { method: string; path: string; query: string }) =>
  (!m.method || r.method === m.method) && m.path.test(r.path) && (!m.query || m.query.test(r.query));

function gateOf(fx: MatrixFixture, m: RequestMatch): Gate {
  const gate = m.service === 'sapi' ? fx.sapiGate : m.service === 's3' ? fx.s3Gate : fx.apiGate;
  if (!gate) throw new Error(`no proxy for ${m.service}`);
  return gate;
}

function matcher(m: RequestMatch, state: OperationState): GateMatch {
  const nth = m.nth === 'last-of-baseline' ? state.baselineCounts.get(matchKey(m)) : (m.nth ?? 1);
  if (nth === undefined) throw new Error(`the baseline did not count ${matchKey(m)}`);
  let seen = 0;
  return (r) => matches(m, r) && ++seen === nth;
}

/** Arms a cell's fault before its workflow starts; `struck` resolves once the fault has been injected in full. */
function arm(
  fx: MatrixFixture,
  cell: Cell,
  step: Step,
  state: OperationState,
  handle: () => WorkflowHandle | undefined,
): { struck: Promise<void>; cancel(): void } {
  const inject = cell.inject as Injection;
  const emulator = fx.env.emulator;
  const delayInFlight = (m: RequestMatch) =>
    emulator.faults.add({ method: m.method, path: m.path, times: 1, action: { type: 'delay', ms: IN_FLIGHT_DELAY_MS } });
  const holdAt = (trigger: Trigger) => {
    if (trigger.phase === 'in-flight') delayInFlight(trigger.at);
    return gateOf(fx, trigger.at).hold(matcher(trigger.at, state), trigger.phase === 'response' ? 'response' : 'request');
  };
  /** The worker that sent the held request: its proxy listener, or (extracted API) the one running the activity. */
  const workerOf = async (held: Held): Promise<string> => {
    if (fx.workers.has(held.via)) return held.via;
    const { raw } = await handle()!.describe();
    const pending = raw.pendingActivities?.find((a) => a.activityType?.name === step.activity);
    if (!pending?.lastWorkerIdentity) throw new Error(`no pending ${step.activity} to find the worker of`);
    return pending.lastWorkerIdentity;
  };
  switch (inject.kind) {
    case 'emulator-rule':
      emulator.faults.add({ method: inject.method, path: inject.path, times: inject.times, action: inject.action });
      return { struck: Promise.resolve(), cancel: () => undefined };
    case 'gateway-timeout':
      delayInFlight(inject.at);
      fx.sapiGate.gatewayTimeout(matcher(inject.at, state), inject.afterMs);
      return { struck: Promise.resolve(), cancel: () => undefined };
    case 'kill-worker': {
      const hold = holdAt(inject.trigger);
      const struck = hold.arrived.then(async (held) => {
        const worker = await workerOf(held);
        if (inject.trigger.phase === 'in-flight') {
          held.release('go'); // the emulator has it (delayed) and performs it for a client that is gone
          await sleep(100);
          fx.killWorker(worker);
        } else {
          fx.killWorker(worker);
          held.release('drop');
        }
      });
      return { struck, cancel: hold.cancel };
    }
    case 'restart-temporal': {
      const hold = holdAt(inject.trigger);
      const struck = hold.arrived.then(async (held) => {
        if (inject.trigger.phase === 'in-flight') held.release('go');
        await fx.killTemporal();
        if (inject.trigger.phase !== 'in-flight') held.release('go');
        await sleep(1_000);
        await fx.restartTemporal();
      });
      return { struck, cancel: hold.cancel };
    }
    case 's3-outage': {
      const hold = holdAt(inject.trigger);
      const struck = hold.arrived.then((held) => {
        fx.s3Gate.down(inject.ms);
        held.release('drop');
      });
      return { struck, cancel: hold.cancel };
    }
  }
}

/** Checks after the run that an emulator-side fault really struck (a rule that never matched proves nothing). */
function faultStruck(fx: MatrixFixture, cell: Cell, since: number): string | undefined {
  const inject = cell.inject!;
  if (inject.kind === 'emulator-rule') {
    const hit = fx.env.emulator.requests.some(
      (r) => r.time >= since && r.method === inject.method && inject.path.test(r.path) && r.fault === inject.action.type,
    );
    return hit ? undefined : `the emulator rule ${inject.action.type} on ${inject.method} ${inject.path.source} never matched`;
  }
  if (inject.kind === 'gateway-timeout') {
    return fx.sapiGate.requests.some((r) => r.time >= since && r.status === 504) ? undefined : 'the gateway timeout never struck';
  }
  return undefined;
}

function jobOperationOf(cell: Cell): 'tableCreate' | 'tableImport' | 'tableExport' {
  if (cell.operation === 'export-sliced') return 'tableExport';
  return (cell.operation === 'import-importer' || cell.operation === 'import-sliced') && !cell.createsTable ? 'tableImport' : 'tableCreate';
}

async function runCell(fx: MatrixFixture, cell: Cell, state: OperationState, n: number): Promise<void> {
  await fx.ensureWorkers();
  const run = await state.build(n, cell);
  const since = Date.now();
  const jobsBefore = await listJobs(fx.env.emulator);
  const lastJobBefore = jobsBefore.length ? jobsBefore[jobsBefore.length - 1]!.id : 0;
  const step = STEPS.find((s) => s.operation === cell.operation && s.name === cell.step);
  let handle: WorkflowHandle | undefined;
  if (cell.jobFails) fx.env.emulator.faults.failJob({ operationName: jobOperationOf(cell), message: 'failed by the fault matrix', times: 1 });
  const armed = step && cell.inject ? arm(fx, cell, step, state, () => handle) : undefined;
  try {
    handle = await fx.client.workflow.start(run.workflow, {
      taskQueue: fx.taskQueue,
      workflowId: `matrix-${cell.id.replace(/[^A-Za-z0-9-]+/g, '-')}-${n}-${Date.now().toString(36)}`,
      args: run.args,
      workflowExecutionTimeout: 10 * 60_000 + S3_OUTAGE_MS,
    });
    const outcome = handle.result().then(
      (result: unknown) => ({ result, error: undefined as unknown }),
      (error: unknown) => ({ result: undefined as unknown, error }),
    );
    if (armed) {
      const first = await Promise.race([armed.struck.then(() => 'struck' as const), outcome.then(() => 'ended' as const)]);
      if (first === 'ended') throw new Error(`the fault never struck: the workflow ended first (${failureText((await outcome).error) || 'successfully'})`);
    }
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), CELL_RESULT_TIMEOUT_MS)));
    const ended = await Promise.race([outcome, timedOut]);
    clearTimeout(timer);
    if (ended === 'timeout') {
      const pending = (await handle.describe()).raw.pendingActivities?.map(
        (a) => `${a.activityType?.name} attempt ${a.attempt} ${a.lastFailure?.message ?? ''}`,
      );
      await handle.terminate('fault matrix: cell timed out').catch(() => undefined);
      throw new Error(`the workflow did not end within ${CELL_RESULT_TIMEOUT_MS / 1000} s after the fault; pending: ${JSON.stringify(pending)}`);
    }
    const notStruck = cell.inject ? faultStruck(fx, cell, since) : undefined;
    if (notStruck) throw new Error(notStruck);
    const expected = cell.expect.outcome;
    if (expected === 'success') {
      if (ended.error) throw new Error(`expected success, the workflow failed: ${failureType(ended.error) ?? ''} ${failureText(ended.error)}`);
      await run.verify(ended.result);
    } else {
      if (!ended.error) throw new Error(`expected the failure ${expected.failure}, the workflow succeeded`);
      expect(failureType(ended.error)).toBe(expected.failure);
      await run.verifyFailed();
    }
    // exactly one job per logical operation: in the service's jobs list and in the requests that created jobs
    const jobs = (await listJobs(fx.env.emulator)).filter((j) => j.id > lastJobBefore && j.operationName === run.jobOperation && j.tableId === run.tableId);
    const posts = creatingRequests(fx.env.emulator.requests, since, 'POST', run.jobPath);
    expect({ jobs: jobs.map((j) => `${j.id}:${j.status}`), creatingPosts: posts.length }).toEqual({ jobs: [expect.any(String)], creatingPosts: 1 });
    if (expected === 'success' && cell.operation !== 'extract') expect((ended.result as { jobId: number }).jobId).toBe(jobs[0]!.id);
    // a receipt for every load (issue 42): exactly one for the load that ended well, naming its job and rows; none for a failed load
    if (cell.operation !== 'export-sliced') {
      const column = cell.operation === 'extract' ? 'origin_workflow_id' : 'workflow_id';
      const receipts = (await receiptsWhere(fx.env.emulator, column, handle.workflowId)).map((r) => ({ tableId: r.tableId, jobId: r.jobId, rows: r.rows }));
      expect({ receipts }).toEqual({ receipts: expected === 'success' ? [{ tableId: run.tableId, jobId: jobs[0]!.id, rows: state.expectedRows }] : [] });
    }
  } finally {
    armed?.cancel();
    fx.env.emulator.faults.clear();
    fx.sapiGate.reset();
    fx.s3Gate.reset();
    fx.apiGate?.reset();
  }
}

/** Counts, after the baseline, the requests that `last-of-baseline` triggers of this operation will pick. */
function countBaseline(fx: MatrixFixture, operation: Operation, state: OperationState, since: number): void {
  for (const step of STEPS.filter((s) => s.operation === operation)) {
    for (const m of [...Object.values(step.s3 ?? {}), ...Object.values(step.api ?? {})] as RequestMatch[]) {
      if (m.nth !== 'last-of-baseline') continue;
      const count = gateOf(fx, m).requests.filter((r) => r.time >= since && matches(m, r)).length;
      state.baselineCounts.set(matchKey(m), count);
    }
  }
}

// ---- the operations -------------------------------------------------------------------------------------------

async function importState(operation: Operation, fx: MatrixFixture): Promise<OperationState> {
  const dir = join(fx.env.dataDir, 'sources');
  mkdirSync(dir, { recursive: true });
  const via = operation === 'import-importer' ? 'importer' : 'direct';
  const sliced = operation === 'import-sliced';
  const source = join(dir, `${operation}.csv`);
  const slices = sliced ? [0, 1, 2, 3].map((i) => join(dir, `${operation}-slice-${i}.csv`)) : undefined;
  let lines: string[];
  if (slices) {
    lines = [];
    for (const [i, slice] of slices.entries()) {
      await writeRows(slice, 1_000, { header: false, from: i * 1_000 });
      lines.push(...csvRows(readFileSync(slice, 'utf8'), false));
    }
  } else {
    // direct: 3 parts of 5 MiB; small (the short path) and importer: one small request
    await writeRows(source, via === 'direct' && operation !== 'import-small' ? 110_000 : 2_000, { header: true });
    lines = csvRows(readFileSync(source, 'utf8'), true);
  }
  const seed = join(dir, 'seed.csv');
  await writeRows(seed, 1, { header: true, from: 999_999 });
  const state: OperationState = {
    expectedChecksum: rowsChecksum(lines),
    expectedRows: lines.length,
    baselineCounts: new Map(),
    async build(n, cell) {
      const bucketId = `in.c-mx${n}`;
      const tableId = `${bucketId}.data`;
      const fileName = `matrix-${operation}-${n}.csv`;
      const emulator = fx.env.emulator;
      // importer and sliced uploads load into an existing table (import-async), direct uploads create theirs
      const load = (via === 'importer' || sliced) && !cell.createsTable;
      if (load) {
        // load into an existing table: create it first (no faults yet) from a one-row seed
        await fx.client.workflow.execute('importTableWorkflow', {
          taskQueue: fx.taskQueue,
          workflowId: `matrix-seed-${n}-${Date.now().toString(36)}`,
          args: [{ source: seed, bucketId, createBucket: true, table: 'data', fileName: `seed-${n}.csv`, polling: POLLING }],
        });
      }
      const filesNamed = async () => (await listFiles(emulator)).filter((f) => f.name === fileName).length;
      return {
        workflow: 'importTableWorkflow',
        args: [
          {
            source: slices ? slices[0]! : source,
            slices,
            columns: slices ? ['id', 'payload'] : undefined,
            bucketId,
            createBucket: !load,
            table: 'data',
            mode: load ? 'load' : 'create',
            incremental: false,
            via,
            fileName,
            polling: POLLING,
          },
        ],
        tableId,
        jobOperation: load ? 'tableImport' : 'tableCreate',
        jobPath: load ? new RegExp(`^/v2/storage/tables/${tableId}/import-async$`) : new RegExp(`^/v2/storage/buckets/${bucketId}/tables-async$`),
        async verify(result) {
          const r = result as ImportTableResult;
          expect(r.importedRowsCount).toBe(state.expectedRows);
          expect(r.receipt?.status).toBe('written');
          expect(rowsChecksum(await tableRows(emulator, tableId))).toBe(state.expectedChecksum);
          expect({ filesNamed: await filesNamed() }).toEqual({ filesNamed: 1 }); // no orphan from a lost prepare/upload
        },
        async verifyFailed() {
          expect({ filesNamed: await filesNamed() }).toEqual({ filesNamed: 0 });
          if (load) {
            // the table existed before: it must be as it was (the seed row), the bucket kept
            expect(await tableRows(emulator, tableId)).toEqual([expect.stringMatching(/^999999,/)]);
          } else {
            expect({ table: await tableExists(emulator, tableId), bucket: await bucketExists(emulator, bucketId) }).toEqual({ table: false, bucket: false });
          }
        },
      };
    },
  };
  return state;
}

async function exportState(fx: MatrixFixture): Promise<OperationState> {
  const dir = join(fx.env.dataDir, 'sources');
  mkdirSync(dir, { recursive: true });
  const source = join(dir, 'export-source.csv');
  await writeRows(source, 30_000, { header: true }); // ~3 MB: a dozen slices of 256 KiB
  const lines = csvRows(readFileSync(source, 'utf8'), true);
  const tableId = 'in.c-mxexport.data';
  await fx.client.workflow.execute('importTableWorkflow', {
    taskQueue: fx.taskQueue,
    workflowId: `matrix-export-load-${Date.now().toString(36)}`,
    args: [{ source, bucketId: 'in.c-mxexport', createBucket: true, table: 'data', polling: POLLING }],
  });
  // an older export of the same table with other parameters: a reconciliation must never adopt it
  await fx.client.workflow.execute('exportTableWorkflow', {
    taskQueue: fx.taskQueue,
    workflowId: `matrix-export-decoy-${Date.now().toString(36)}`,
    args: [{ tableId, destination: join(dir, 'decoy.csv'), columns: ['id'], polling: POLLING }],
  });
  const state: OperationState = {
    expectedChecksum: rowsChecksum(lines),
    expectedRows: lines.length,
    baselineCounts: new Map(),
    async build(n) {
      const destination = join(fx.env.dataDir, 'exports', `export-${n}.csv`);
      return {
        workflow: 'exportTableWorkflow',
        args: [{ tableId, destination, polling: POLLING }],
        tableId,
        jobOperation: 'tableExport',
        jobPath: new RegExp(`^/v2/storage/tables/${tableId}/export-async$`),
        async verify(result) {
          const r = result as ExportTableResult;
          const text = readFileSync(destination);
          expect({ sliced: r.sliced, sha256: r.sha256 }).toEqual({ sliced: true, sha256: sha256(text) });
          expect(rowsChecksum(csvRows(text.toString('utf8'), true))).toBe(state.expectedChecksum);
        },
        verifyFailed: async () => undefined,
      };
    },
  };
  return state;
}

async function extractState(fx: MatrixFixture): Promise<OperationState> {
  const state: OperationState = {
    // the ids of every record of the pages, as the source; the full rows are compared with the baseline's
    expectedChecksum: '',
    expectedRows: Array.from({ length: EXTRACT_PAGES }, (_, i) => largePage(i + 1).length).reduce((a, b) => a + b, 0),
    baselineCounts: new Map(),
    async build(n) {
      const bucketId = `in.c-mx${n}`;
      const tableId = `${bucketId}.large_items`;
      const config = {
        parameters: {
          api: { baseUrl: `${await fx.apiGate!.listen('api')}/`, pagination: { method: 'response.param', responseParam: 'next_page', queryParam: 'page' } },
          config: { outputBucket: `mx${n}`, jobs: [{ endpoint: 'large/items', dataField: 'items' }] },
        },
      };
      return {
        workflow: 'extractWorkflow',
        args: [{ config, options: { heartbeatTimeoutMs: 5_000, fetch: { baseDelayMs: 5, maxDelayMs: 20 }, polling: POLLING } }],
        tableId,
        jobOperation: 'tableCreate',
        jobPath: new RegExp(`^/v2/storage/buckets/${bucketId}/tables-async$`),
        async verify(result) {
          const r = result as ExtractResult;
          const table = await fx.env.emulator.readTable(tableId);
          const ids = table.rows.map((row) => row[table.columns.indexOf('id')]!).sort();
          const expectedIds = Array.from({ length: EXTRACT_PAGES }, (_, i) => largePage(i + 1).map((record) => String(record.id)))
            .flat()
            .sort();
          expect(rowsChecksum(ids)).toBe(rowsChecksum(expectedIds));
          const rows = table.rows.map((row) => row.join(','));
          if (!state.expectedChecksum) state.expectedChecksum = rowsChecksum(rows);
          expect(rowsChecksum(rows)).toBe(state.expectedChecksum);
          expect(r.tables).toEqual([expect.objectContaining({ tableId, rows: state.expectedRows })]);
        },
        verifyFailed: async () => undefined,
      };
    },
  };
  return state;
}

// ---- the test file body ---------------------------------------------------------------------------------------

/**
 * Registers one test per applicable cell of `operation` (the subset, or all with SAPI_FAULT_MATRIX=full) on one
 * shared fixture, and writes/prints the results when the file ends.
 */
export function describeMatrix(operation: Operation): void {
  const mode = process.env.SAPI_FAULT_MATRIX === 'full' ? 'full' : 'subset';
  const selected = new Set(cellsFor(operation).map((c) => c.id));
  const all = CELLS.filter((c) => c.operation === operation);
  const results = new Map<string, CellResult>();
  for (const cell of all) {
    results.set(cell.id, {
      id: cell.id,
      operation,
      step: cell.step,
      boundary: isBaseline(cell) ? '-' : cell.boundary,
      fault: isBaseline(cell) ? 'none' : cell.fault,
      status: cell.na ? 'n/a' : 'not run',
      note: cell.na,
    });
  }

  describe(`fault matrix: ${operation} (${mode})`, () => {
    let fx: MatrixFixture;
    let state: OperationState;
    let n = 0;
    let fixtureError: unknown;

    beforeAll(async () => {
      try {
        fx = await startMatrixFixture(operation, {
          emulator: operation === 'export-sliced' ? { sliceSizeBytes: 256 * 1024 } : undefined,
          sampleApi: operation === 'extract',
        });
        await fx.ensureWorkers();
        state = operation === 'export-sliced' ? await exportState(fx) : operation === 'extract' ? await extractState(fx) : await importState(operation, fx);
      } catch (err) {
        fixtureError = err;
        throw err;
      }
    }, 300_000);

    afterAll(async () => {
      await fx?.stop();
      const file = writeOperationResults({ operation, mode, finishedAt: new Date().toISOString(), cells: [...results.values()] }, testStack().dataDir);
      process.stdout.write(`\nfault matrix (${operation}, ${mode}): results in ${file}\n${formatSummary(readAllResults())}\n`);
    }, 120_000);

    for (const cell of all.filter((c) => selected.has(c.id) && !c.na)) {
      const title = isBaseline(cell) ? `${cell.id}: without a fault, the end state is exact` : `${cell.id} (${cell.activity}): ends exact`;
      it(
        title,
        async () => {
          if (fixtureError) throw fixtureError;
          const started = Date.now();
          const result = results.get(cell.id)!;
          try {
            const since = Date.now();
            await runCell(fx, cell, state, ++n);
            if (isBaseline(cell)) countBaseline(fx, operation, state, since);
            result.status = 'pass';
            result.note = undefined;
          } catch (err) {
            result.status = 'fail';
            result.note = err instanceof Error ? err.message.split('\n').filter(Boolean).slice(0, 6).join(' ') : String(err);
            throw err;
          } finally {
            result.seconds = (Date.now() - started) / 1000;
          }
        },
        280_000 + S3_OUTAGE_MS,
      );
    }
  });
}
