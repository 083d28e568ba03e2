/**
 * backfillWorkflow and its window children (extractWorkflow with its load children, importTableWorkflow) on the
 * time-skipping test server with fake activities (FakeProject): the windows and their bounds, the sliding window,
 * the live run state left alone (or advanced once on request), a rerun that redoes no done window, continue-as-new
 * between windows, pause / resume / cancel as updates and their refusals.
 */
import type { WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { SapiErrorCode } from '../../src/errors';
import type { BackfillInput, BackfillProgress, BackfillResult } from '../../src/contracts/backfill';
import type { FetchPagesInput } from '../../src/activities/extract-fetch-pages';
import { backfillCancelUpdate, backfillPauseUpdate, backfillProgressQuery, backfillResumeUpdate, backfillWorkflow } from '../../src/workflows';
import { FakeProject } from './harness/fake-project';
import { startTimeSkipping, withWorker } from './harness/env';
import { codeOf, refusalOf, settled, type Settled } from './harness/outcome';

const BUCKET = 'in.c-bf';
const LIVE = { time: { previousStart: 1_700_000_000 }, 'json_parser.struct': { kept: true } };

let env: TestWorkflowEnvironment;
beforeEach(async () => {
  env = await startTimeSkipping();
});
afterEach(async () => {
  await env?.teardown();
});

/** A configuration whose one job asks for the window: `since`/`until` from `{"attr": "backfill.from"|"backfill.to"}`. */
const config = {
  parameters: {
    api: { baseUrl: 'https://api.example.com/' },
    config: {
      outputBucket: 'bf',
      incrementalOutput: true,
      jobs: [{ endpoint: 'events', dataType: 'events', params: { since: { attr: 'backfill.from' }, until: { attr: 'backfill.to' } } }],
    },
  },
};

function project(): FakeProject {
  const p = new FakeProject();
  p.api.set('events', 2); // 20 rows a window
  p.runStates.set('live', structuredClone(LIVE));
  return p;
}

const extractBackfill = (more: Partial<BackfillInput> = {}): BackfillInput =>
  ({
    kind: 'extract',
    extract: { config, stateKey: 'live', options: { bucketId: BUCKET } },
    from: '2025-01-01',
    to: '2025-02-01',
    window: 'P7D',
    parallel: 2,
    ...more,
  }) as BackfillInput;

/** The message of a failed run's cause (the workflow's own failure). */
const causeOf = (failure: unknown): string => String((failure as { cause?: { message?: string } } | undefined)?.cause?.message);

let seq = 0;
function runWith<T>(
  p: FakeProject,
  args: BackfillInput,
  during: (handle: WorkflowHandle<typeof backfillWorkflow>) => Promise<T>,
  workflowId = `backfill-${++seq}`,
) {
  return withWorker(env, p, async (taskQueue) => {
    const handle = await env.client.workflow.start(backfillWorkflow, { taskQueue, workflowId, args: [args] });
    const seen = await during(handle);
    return { ...(await settled(handle.result())), seen };
  });
}
const run = (p: FakeProject, args: BackfillInput, workflowId?: string): Promise<Settled<BackfillResult>> => runWith(p, args, async () => undefined, workflowId);

/** Resolves once the progress query answers what `done` wants. */
async function until(handle: WorkflowHandle<typeof backfillWorkflow>, done: (p: BackfillProgress) => boolean): Promise<BackfillProgress> {
  for (;;) {
    const progress = await handle.query(backfillProgressQuery);
    if (done(progress)) return progress;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** The query params each first page of a window asked with (`since`..`until`), by the window's child workflow id. */
function requestedWindows(p: FakeProject): Record<string, string> {
  const seen: Record<string, string> = {};
  for (const call of p.callsOf('fetchPages')) {
    const input = call.input as unknown as FetchPagesInput;
    const params = JSON.stringify(input.state.next);
    // in the URL's query (`since=2025-01-01`) or among the params (`"since":"2025-01-01"`)
    const param = (name: string) => decodeURIComponent(new RegExp(`${name}(?:=|":")([^&"]+)`).exec(params)?.[1] ?? 'none');
    const [since, until] = [param('since'), param('until')];
    seen[input.runKey.split('/')[0]!] = `${since}..${until}`;
  }
  return seen;
}

/** fetchPages calls per window child (runKey's workflow id part). */
function fetchesPerWindow(p: FakeProject): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const call of p.callsOf('fetchPages')) {
    const id = (call.input as unknown as FetchPagesInput).runKey.split('/')[0]!;
    counts[id] = (counts[id] ?? 0) + 1;
  }
  return counts;
}

describe('backfillWorkflow: extraction windows', () => {
  it('runs one child per window with its bounds in parameters.config.backfill, loads every window once, leaves the live run state alone', async () => {
    const p = project();
    const { result, failure } = await run(p, extractBackfill(), 'bf-basic');
    expect(failure).toBeUndefined();
    expect(result).toMatchObject({ kind: 'extract', windows: 5, done: 5, alreadyDone: 0, rows: 100, cancelled: false });
    expect(requestedWindows(p)).toEqual({
      'bf-basic-w0001': '2025-01-01..2025-01-08',
      'bf-basic-w0002': '2025-01-08..2025-01-15',
      'bf-basic-w0003': '2025-01-15..2025-01-22',
      'bf-basic-w0004': '2025-01-22..2025-01-29',
      'bf-basic-w0005': '2025-01-29..2025-02-01',
    });
    // each window fetched its 2 pages in one batch, once: nothing was fetched twice
    expect(Object.values(fetchesPerWindow(p))).toEqual([1, 1, 1, 1, 1]);
    // 5 windows × 20 rows, loaded incrementally into one table
    expect(p.tables.get(`${BUCKET}.events`)?.rows).toBe(100);
    // the windows never read nor wrote the live state
    expect(p.callsOf('readRunState')).toHaveLength(0);
    expect(p.callsOf('writeRunState')).toHaveLength(0);
    expect(p.runStates.get('live')).toEqual(LIVE);
    expect(result!.perWindow.map((w) => [w.workflowId, w.state, w.rows])).toEqual([1, 2, 3, 4, 5].map((n) => [`bf-basic-w000${n}`, 'done', 20]));
  });

  it('keeps at most `parallel` windows going, the first one alone', async () => {
    const p = project().hold('fetchPages');
    const { result, seen } = await runWith(p, extractBackfill({ parallel: 3 }), async (handle) => {
      // the first window is held in its fetch: it runs alone
      await p.waitFor('fetchPages');
      const first = await handle.query(backfillProgressQuery);
      // the windows after it are held at their start (validation), the first goes on
      p.hold('validateExtractConfig');
      p.open('fetchPages');
      const wide = await until(handle, (s) => s.counts.done === 1 && s.counts.running === 3);
      // three are held where they started (a fourth would have asked too)
      await p.waitFor('validateExtractConfig', () => p.callsOf('validateExtractConfig').length === 4);
      const still = await handle.query(backfillProgressQuery);
      const validations = p.callsOf('validateExtractConfig').length;
      p.open('validateExtractConfig');
      return { first: first.counts, wide: wide.counts, still: still.counts, validations };
    });
    expect(seen.first).toMatchObject({ running: 1, pending: 4 });
    expect(seen.wide).toMatchObject({ done: 1, running: 3, pending: 1 });
    expect(seen.still).toMatchObject({ running: 3, pending: 1 });
    expect(seen.validations).toBe(4);
    expect(result).toMatchObject({ done: 5, rows: 100 });
  });

  it('with advanceState, stores the live state once at the end: previousStart = to, other keys kept', async () => {
    const p = project();
    const { result } = await run(p, extractBackfill({ advanceState: true } as Partial<BackfillInput>));
    const to = Date.UTC(2025, 1, 1) / 1000;
    expect(result?.state).toEqual({ stateKey: 'live', advanced: true, previousStart: to });
    expect(p.callsOf('writeRunState')).toHaveLength(1);
    expect(p.runStates.get('live')).toEqual({ ...LIVE, time: { previousStart: to } });
  });

  it('with advanceState, never moves a live state that is already past the range back', async () => {
    const p = project();
    const later = { time: { previousStart: Date.UTC(2026, 0, 1) / 1000 } };
    p.runStates.set('live', later);
    const { result } = await run(p, extractBackfill({ advanceState: true } as Partial<BackfillInput>));
    expect(result?.state).toMatchObject({ advanced: false, previousStart: later.time.previousStart });
    expect(p.callsOf('writeRunState')).toHaveLength(0);
    expect(p.runStates.get('live')).toEqual(later);
  });

  it('a failed window fails the backfill naming it, the state is not advanced; a rerun under the same id runs only the windows not done', async () => {
    const p = project();
    let failing = true;
    p.fail('fetchPages', (call) => {
      if (failing && (call.input as unknown as FetchPagesInput).runKey.startsWith('bf-rerun-w0003/'))
        throw ApplicationFailure.nonRetryable('400 Bad Request', SapiErrorCode.EXTRACT_HTTP_STATUS);
    });
    const first = await run(p, extractBackfill({ advanceState: true, parallel: 1 } as Partial<BackfillInput>), 'bf-rerun');
    expect(codeOf(first.failure)).toBe(SapiErrorCode.BACKFILL_WINDOW_FAILED);
    // the window's failure as its activity raised it, code first (not the child's "Activity task failed")
    expect(String(causeOf(first.failure))).toMatch(/w0003 \(2025-01-15\.\.2025-01-22\): SAPI_EXTRACT_HTTP_STATUS: .*400 Bad Request/);
    expect(p.runStates.get('live')).toEqual(LIVE);
    const loadedBefore = p.tables.get(`${BUCKET}.events`)?.rows;
    expect(loadedBefore).toBe(40); // windows 1 and 2; 4 and 5 were not started (parallel 1)

    failing = false;
    const before = fetchesPerWindow(p);
    const second = await run(p, extractBackfill({ advanceState: true, parallel: 1 } as Partial<BackfillInput>), 'bf-rerun');
    expect(second.result).toMatchObject({ done: 5, alreadyDone: 2, rows: 60 });
    const after = fetchesPerWindow(p);
    // windows 1 and 2 were not fetched again; 3 (failed before), 4 and 5 were, once each
    expect(after['bf-rerun-w0001']).toBe(before['bf-rerun-w0001']);
    expect(after['bf-rerun-w0002']).toBe(before['bf-rerun-w0002']);
    expect(after['bf-rerun-w0004']).toBe(1);
    expect(after['bf-rerun-w0005']).toBe(1);
    expect(p.tables.get(`${BUCKET}.events`)?.rows).toBe(100);
    expect(p.runStates.get('live')?.time.previousStart).toBe(Date.UTC(2025, 1, 1) / 1000);
  });

  it('continues as new between windows and redoes none of them', async () => {
    const p = project();
    const { result } = await run(p, extractBackfill({ from: '2025-01-01', to: '2025-03-01', window: 'P1W', continueAsNewAfterWindows: 2 }), 'bf-can');
    expect(result).toMatchObject({ windows: 9, done: 9, rows: 180 });
    // it continued as new (how many windows end in one run before it can depends on which end together: 2 or more,
    // so the count of runs is not fixed), and no window was redone by a later run
    expect(result!.runs).toBeGreaterThanOrEqual(2);
    const fetched = fetchesPerWindow(p);
    expect(Object.keys(fetched)).toHaveLength(9);
    expect(Object.values(fetched).every((n) => n === 1)).toBe(true);
    expect(p.tables.get(`${BUCKET}.events`)?.rows).toBe(180);
  });

  it('refuses an input that would clobber: a full load per window, importState, advanceState without stateKey, a bad range', async () => {
    const p = project();
    const full = { ...config, parameters: { ...config.parameters, config: { ...config.parameters.config, incrementalOutput: false } } };
    const cases: Array<[Partial<BackfillInput>, string]> = [
      [{ extract: { config: full, options: { bucketId: BUCKET } } } as Partial<BackfillInput>, 'set extract.options.incremental'],
      [{ extract: { config, importState: {} } } as Partial<BackfillInput>, 'extract.importState is not supported'],
      [{ extract: { config }, advanceState: true } as Partial<BackfillInput>, 'advanceState needs extract.stateKey'],
      [{ from: '2025-02-01', to: '2025-01-01' }, 'must be before to'],
      [{ window: '7 days' }, 'window must be an ISO 8601 duration'],
    ];
    for (const [more, message] of cases) {
      const { failure } = await run(p, extractBackfill(more));
      expect(codeOf(failure)).toBe(SapiErrorCode.INVALID_INPUT);
      expect(String(causeOf(failure))).toContain(message);
    }
    expect(p.callsOf('fetchPages')).toHaveLength(0);
  });
});

describe('backfillWorkflow: pause, resume, cancel', () => {
  it('pause starts no further window (the running ones end), resume goes on; the refusals write nothing', async () => {
    const p = project().hold('fetchPages');
    const { result, seen } = await runWith(p, extractBackfill({ parallel: 2 }), async (handle) => {
      await until(handle, (s) => s.counts.running === 1);
      const refusedResume = await refusalOf(handle.executeUpdate(backfillResumeUpdate));
      const paused = await handle.executeUpdate(backfillPauseUpdate);
      const refusedPause = await refusalOf(handle.executeUpdate(backfillPauseUpdate));
      p.open('fetchPages');
      const idle = await until(handle, (s) => s.phase === 'paused');
      const resumed = await handle.executeUpdate(backfillResumeUpdate);
      return { refusedResume, paused: paused.paused, refusedPause, idle: idle.counts, resumed: resumed.paused };
    });
    expect(seen.refusedResume).toBe('the backfill is not paused');
    expect(seen.paused).toBe(true);
    expect(seen.refusedPause).toBe('the backfill is already paused');
    // the window going when the pause came ended; no other started while paused
    expect(seen.idle).toMatchObject({ done: 1, running: 0, pending: 4 });
    expect(seen.resumed).toBeUndefined();
    expect(result).toMatchObject({ done: 5, rows: 100, cancelled: false });
  });

  it('cancel lets the windows going end whole, cancels the rest, and refuses a second cancel', async () => {
    const p = project().hold('fetchPages');
    const { result, seen } = await runWith(p, extractBackfill({ parallel: 2 }), async (handle) => {
      await until(handle, (s) => s.counts.running === 1);
      const cancelling = await handle.executeUpdate(backfillCancelUpdate, { args: [{ reason: 'wrong range' }] });
      const again = await refusalOf(handle.executeUpdate(backfillCancelUpdate, { args: [{}] }));
      p.open('fetchPages');
      return { cancelling: cancelling.cancelling, again };
    });
    expect(seen.cancelling).toBe('wrong range');
    expect(seen.again).toContain('being cancelled');
    expect(result).toMatchObject({ cancelled: true, done: 1, rows: 20 });
    expect(result!.perWindow.map((w) => w.state)).toEqual(['done', 'cancelled', 'cancelled', 'cancelled', 'cancelled']);
    // the window going was loaded whole: its 20 rows, nothing of the others
    expect(p.tables.get(`${BUCKET}.events`)?.rows).toBe(20);
    expect(Object.keys(fetchesPerWindow(p))).toHaveLength(1);
  });
});

describe('backfillWorkflow: imports', () => {
  it('imports every source once into the same table, incrementally, with the backfill priority', async () => {
    const p = project();
    p.tables.set('in.c-main.orders', { rows: 5, typed: false, columns: ['id', 'name'], metadata: {} });
    for (let i = 1; i <= 4; i++) p.sources.set(`/data/day-${i}.csv`, { rows: 10 * i, bytes: 100 });
    const input: BackfillInput = {
      kind: 'import',
      import: { bucketId: 'in.c-main', table: 'orders', mode: 'load', incremental: true },
      sources: [1, 2, 3, 4].map((i) => `/data/day-${i}.csv`),
      parallel: 2,
    };
    const { result } = await run(p, input, 'bf-import');
    expect(result).toMatchObject({ kind: 'import', windows: 4, done: 4, rows: 100 });
    expect(p.tables.get('in.c-main.orders')?.rows).toBe(105);
    expect(result!.perWindow.map((w) => [w.workflowId, w.source, w.rows])).toEqual(
      [1, 2, 3, 4].map((i) => [`bf-import-w000${i}`, `/data/day-${i}.csv`, 10 * i]),
    );
    // every child was started with the backfill priority and the fairness key a live import of the connection has
    const history = await env.client.workflow.getHandle('bf-import').fetchHistory();
    const starts = (history.events ?? []).map((e) => e.startChildWorkflowExecutionInitiatedEventAttributes).filter((a) => a != null);
    expect(starts.map((a) => [a.workflowId, a.priority?.priorityKey, a.priority?.fairnessKey])).toEqual(
      [1, 2, 3, 4].map((i) => [`bf-import-w000${i}`, 4, 'storage:default']),
    );
  });

  it('refuses a replacing import and a source listed twice', async () => {
    const p = project();
    const replacing = await run(p, { kind: 'import', import: { bucketId: 'in.c-main', table: 'orders' }, sources: ['/data/small.csv'] });
    expect(String(causeOf(replacing.failure))).toContain('import.incremental must be true');
    const twice = await run(p, {
      kind: 'import',
      import: { bucketId: 'in.c-main', table: 'orders', incremental: true },
      sources: ['/data/small.csv', '/data/small.csv'],
    });
    expect(String(causeOf(twice.failure))).toContain('lists a file twice');
  });
});
