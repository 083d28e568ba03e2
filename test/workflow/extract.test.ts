/**
 * extractWorkflow and its load children (importTableWorkflow) on the time-skipping test server with fake activities
 * (FakeProject: the extracted API in `api`, staged rows in `staged`, tables in `tables`). Jobs, iterations,
 * continue-as-new, pause / resume / cancel / setLimits as updates and their refusals, a cancellation request, run
 * state, failures of a load, and the outages and failure-after-commit of issue 36.
 */
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { SapiErrorCode } from '../../src/errors';
import type { ExtractInput, ExtractOptions, ExtractProgress, ExtractResult } from '../../src/contracts/extract';
import { extractCancelUpdate, extractProgressQuery, extractWorkflow, pauseUpdate, resumeUpdate, setLimitsUpdate } from '../../src/workflows';
import { FakeProject, outage, unavailable, type ActivityName } from './harness/fake-project';
import { startTimeSkipping, withWorker } from './harness/env';
import { codeOf, failureOf, refusalOf, settled, type Settled } from './harness/outcome';

const HOUR = 60 * 60 * 1000;
const BUCKET = 'in.c-ex';

// a test server per test (up in well under a second): no test's time skipping or leftover work reaches another
let env: TestWorkflowEnvironment;
beforeEach(async () => {
  env = await startTimeSkipping();
});
afterEach(async () => {
  await env?.teardown();
});

/** A configuration of one job per endpoint. */
function config(endpoints: string[], extra: Record<string, unknown> = {}) {
  return {
    parameters: {
      api: { baseUrl: 'https://api.example.com/' },
      config: { outputBucket: 'ex', jobs: endpoints.map((endpoint) => ({ endpoint, dataType: endpoint })) },
      ...extra,
    },
  };
}

/** The API: users has 3 pages, orders 1 (10 rows a page). */
function project(): FakeProject {
  const p = new FakeProject();
  p.api.set('users', 3);
  p.api.set('orders', 1);
  return p;
}

let seq = 0;
const input = (cfg: unknown, options: ExtractOptions = {}, more: Partial<ExtractInput> = {}): ExtractInput => ({
  config: cfg,
  options: { bucketId: BUCKET, ...options },
  ...more,
});

function run(p: FakeProject, args: ExtractInput) {
  return withWorker(env, p, (taskQueue) => env.client.workflow.execute(extractWorkflow, { taskQueue, workflowId: `extract-${++seq}`, args: [args] }));
}

function runWith<T>(
  p: FakeProject,
  args: ExtractInput,
  during: (handle: WorkflowHandle<typeof extractWorkflow>, ending: () => Promise<Settled<ExtractResult>>) => Promise<T>,
) {
  return withWorker(env, p, async (taskQueue) => {
    const handle = await env.client.workflow.start(extractWorkflow, { taskQueue, workflowId: `extract-${++seq}`, args: [args] });
    let result: Promise<Settled<ExtractResult>> | undefined;
    const ending = () => (result ??= settled(handle.result()));
    const seen = await during(handle, ending);
    return { ...(await ending()), seen };
  });
}

/** Resolves once the progress query answers what `done` wants (the run's own state, asked for: no fixed wait). */
async function until(handle: WorkflowHandle<typeof extractWorkflow>, done: (p: ExtractProgress) => boolean): Promise<ExtractProgress> {
  for (;;) {
    const progress = await handle.query(extractProgressQuery);
    if (done(progress)) return progress;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const rowsOf = (p: FakeProject) => Object.fromEntries([...p.tables].map(([id, t]) => [id, t.rows]));

describe('extractWorkflow', () => {
  it('extracts every job, loads each table with an import child, removes the staging', async () => {
    const p = project();
    const result = await run(p, input(config(['users', 'orders'])));
    expect(rowsOf(p)).toEqual({ [`${BUCKET}.users`]: 30, [`${BUCKET}.orders`]: 10 });
    expect(result).toMatchObject({ pages: 4, records: 40, cancelled: false, runs: 1, staging: { removed: 2 } });
    expect(result.tables.map((t) => [t.name, t.rows, t.stagedRows])).toEqual([
      ['users', 30, 30],
      ['orders', 10, 10],
    ]);
    expect(p.staged.size).toBe(0);
    expect(p.buckets.has(BUCKET)).toBe(true);
  });

  it('loads into an existing table (mode load), replacing its rows unless incremental', async () => {
    const p = project();
    p.buckets.add(BUCKET);
    p.tables.set(`${BUCKET}.users`, { rows: 7, typed: false, columns: ['id', 'name', 'extra'], metadata: {} });
    const result = await run(p, input(config(['users']), { incremental: true }));
    expect(rowsOf(p)).toEqual({ [`${BUCKET}.users`]: 37 });
    // an existing table's column we did not see is kept (empty values)
    expect(result.tables[0]!.columns).toEqual(['id', 'name', 'extra']);
    expect([...p.jobs.values()].map((j) => j.operationName)).toEqual(['tableImport']);
  });

  it('runs parameters.iterations one after another into the same tables', async () => {
    const p = project();
    const result = await run(p, input(config(['users'], { iterations: [{ label: 'a' }, { label: 'b' }] })));
    expect(result.pages).toBe(6);
    expect(rowsOf(p)).toEqual({ [`${BUCKET}.users`]: 60 });
  });

  it('continues as new (continueAsNewAfterPages) with its checkpoint: the same rows, more runs', async () => {
    const p = project();
    const result = await run(p, input(config(['users', 'orders']), { batchPages: 1, continueAsNewAfterPages: 1 }));
    expect(result.runs).toBeGreaterThanOrEqual(4);
    expect(result.pages).toBe(4);
    expect(rowsOf(p)).toEqual({ [`${BUCKET}.users`]: 30, [`${BUCKET}.orders`]: 10 });
    // each page fetched once across the runs
    expect(p.callsOf('fetchPages').filter((c) => c.outcome === 'ok')).toHaveLength(4);
  });

  it('with load: false nothing is loaded and the staging is kept', async () => {
    const p = project();
    const result = await run(p, input(config(['users']), { load: false }));
    expect(result.tables).toEqual([expect.objectContaining({ name: 'users', tableId: null, stagedRows: 30 })]);
    expect(result.staging).toEqual({ kept: true });
    expect(p.tables.size).toBe(0);
    expect(p.staged.get(result.runKey)?.get('users')).toBe(30);
  });

  it('stores the run state of a stateKey after the load, and the next run starts from it', async () => {
    const p = project();
    const first = await run(p, input(config(['orders']), {}, { stateKey: 'nightly' }));
    expect(first.runState?.stored).not.toBeNull();
    expect(p.runStates.get('nightly')).toEqual(first.runState!.stored);
    const second = await run(p, input(config(['orders']), { incremental: true }, { stateKey: 'nightly' }));
    expect(second.runTimes?.previousStart).toBe(first.runTimes?.currentStart);
    expect(rowsOf(p)).toEqual({ [`${BUCKET}.orders`]: 20 });
  });

  it('waits out an API rate limit on a durable timer (skipped time), then goes on', async () => {
    const p = project();
    // the first batch is answered with a 10-minute Retry-After and stages nothing
    p.rateLimitOnce = 10 * 60 * 1000;
    const result = await run(p, input(config(['orders'])));
    const [limited, again] = p.callsOf('fetchPages');
    expect(p.callsOf('fetchPages')).toHaveLength(2);
    expect(again!.at - limited!.at).toBeGreaterThanOrEqual(10 * 60 * 1000);
    expect(result.pages).toBe(1);
    expect(rowsOf(p)).toEqual({ [`${BUCKET}.orders`]: 10 });
  });

  it("a failed load fails the extraction with the import's error; the staged pages are kept", async () => {
    const p = project();
    p.nextJobFails = 'Load error';
    const err = await failureOf(run(p, input(config(['orders']))));
    expect(codeOf(err)).toBe(SapiErrorCode.JOB_FAILED);
    expect(p.tables.size).toBe(0);
    expect(p.staged.size).toBe(1);
  });

  it('an invalid configuration fails before any request, with SAPI_EXTRACT_CONFIG_INVALID', async () => {
    const p = project();
    const err = await failureOf(run(p, input({ parameters: { api: {}, config: { jobs: 'none' } } })));
    expect(codeOf(err)).toBe(SapiErrorCode.EXTRACT_CONFIG_INVALID);
    expect(p.callsOf('fetchPages')).toHaveLength(0);
  });
});

describe('extractWorkflow: loading many tables', () => {
  it('loads at most loadConcurrency tables at once (children in flight read from history), every table loaded once', async () => {
    const p = new FakeProject();
    const endpoints = ['t1', 't2', 't3', 't4', 't5', 't6', 't7'];
    for (const e of endpoints) p.api.set(e, 1);
    const { result, seen } = await runWith(p, input(config(endpoints), { loadConcurrency: 2 }), async (handle, ending) => {
      await ending();
      return (await handle.fetchHistory()).events ?? [];
    });
    expect(result?.tables.map((t) => t.rows)).toEqual(endpoints.map(() => 10));
    expect(rowsOf(p)).toEqual(Object.fromEntries(endpoints.map((e) => [`${BUCKET}.${e}`, 10])));
    let inFlight = 0;
    let most = 0;
    for (const e of seen) {
      if (e.startChildWorkflowExecutionInitiatedEventAttributes) most = Math.max(most, ++inFlight);
      if (e.childWorkflowExecutionCompletedEventAttributes || e.childWorkflowExecutionFailedEventAttributes) inFlight--;
    }
    expect(most).toBe(2);
  });

  it('refuses a loadConcurrency that is not an integer from 1 to 100, before anything runs', async () => {
    const p = project();
    const { failure } = await runWith(p, input(config(['users']), { loadConcurrency: 0 }), async () => undefined);
    expect(codeOf(failure)).toBe(SapiErrorCode.INVALID_INPUT);
    expect(String((failure as WorkflowFailedError).cause?.message)).toContain('options.loadConcurrency must be an integer from 1 to 100, got 0');
    expect(p.tables.size).toBe(0);
  });
});

describe('extractWorkflow: updates', () => {
  it('pause stops after the batch in flight; resume carries on; refusals while paused / not paused', async () => {
    const p = project().hold('fetchPages');
    const { result, seen } = await runWith(p, input(config(['users']), { batchPages: 1 }), async (handle) => {
      await p.waitFor('fetchPages');
      const paused = await handle.executeUpdate(pauseUpdate);
      const again = await refusalOf(handle.executeUpdate(pauseUpdate));
      p.open('fetchPages');
      const idle = await until(handle, (s) => s.phase === 'paused');
      const callsWhilePaused = p.callsOf('fetchPages').length;
      const resumed = await handle.executeUpdate(resumeUpdate);
      const notPaused = await refusalOf(handle.executeUpdate(resumeUpdate));
      return { paused, again, idle, callsWhilePaused, resumed, notPaused };
    });
    expect(seen.paused.paused).toBe(true);
    expect(seen.again).toBe('the extraction is already paused');
    expect(seen.idle).toMatchObject({ phase: 'paused', pages: 1 });
    expect(seen.callsWhilePaused).toBe(1);
    expect(seen.resumed.paused).toBeUndefined();
    expect(seen.notPaused).toBe('the extraction is not paused');
    expect(result?.pages).toBe(3);
    expect(rowsOf(p)).toEqual({ [`${BUCKET}.users`]: 30 });
  });

  it('cancel stops after the batch in flight and loads what was staged (loadOnCancel)', async () => {
    const p = project().hold('fetchPages');
    const { result, seen } = await runWith(p, input(config(['users', 'orders']), { batchPages: 1 }), async (handle) => {
      await p.waitFor('fetchPages');
      const answered = await handle.executeUpdate(extractCancelUpdate, { args: [{ reason: 'enough' }] });
      const again = await refusalOf(handle.executeUpdate(extractCancelUpdate, { args: [{}] }));
      p.open('fetchPages');
      return { answered, again };
    });
    expect(seen.answered.cancelling).toBe('enough');
    expect(seen.again).toBe('cannot cancel: the extraction is being cancelled (enough)');
    expect(result).toMatchObject({ cancelled: true, pages: 1 });
    expect(rowsOf(p)).toEqual({ [`${BUCKET}.users`]: 10 });
    expect(p.staged.size).toBe(0);
  });

  it('cancel with loadOnCancel: false loads nothing and keeps the staging', async () => {
    const p = project().hold('fetchPages');
    const { result } = await runWith(p, input(config(['users']), { batchPages: 1, loadOnCancel: false }), async (handle) => {
      await p.waitFor('fetchPages');
      await handle.executeUpdate(extractCancelUpdate, { args: [{}] });
      p.open('fetchPages');
    });
    expect(result).toMatchObject({ cancelled: true, staging: { kept: true } });
    expect(p.tables.size).toBe(0);
    expect(p.staged.size).toBe(1);
  });

  it('a cancellation request (workflow cancel) stops as the cancel update does, loads, and ends cancelled', async () => {
    const p = project().hold('fetchPages');
    const { failure } = await runWith(p, input(config(['users']), { batchPages: 1 }), async (handle) => {
      await p.waitFor('fetchPages');
      await handle.cancel();
      p.open('fetchPages');
    });
    // it ends cancelled (not failed), after loading what the batch in flight staged
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    expect((failure as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
    expect(rowsOf(p)).toEqual({ [`${BUCKET}.users`]: 10 });
  });

  it('setLimits stops at maxPages and loads; refused below the pages already fetched or when not {maxPages}', async () => {
    const p = project().hold('fetchPages');
    p.api.set('users', 10);
    // two pages a batch: the second batch starts at page 2
    const { result, seen } = await runWith(p, input(config(['users']), { batchPages: 2 }), async (handle) => {
      await p.waitFor('fetchPages');
      const zero = await refusalOf(handle.executeUpdate(setLimitsUpdate, { args: [{ maxPages: 0 }] }));
      const unknown = await refusalOf(handle.executeUpdate(setLimitsUpdate, { args: [{ maxPages: 5, maxRows: 1 } as never] }));
      // once the first batch's two pages are in, a limit below them is refused
      p.open('fetchPages');
      p.hold('fetchPages');
      await p.waitFor('fetchPages', (c) => (c.input as { state?: { pages: number } }).state?.pages === 2);
      const below = await refusalOf(handle.executeUpdate(setLimitsUpdate, { args: [{ maxPages: 1 }] }));
      // the limit is exact: the call in flight (up to 2 pages) would pass 3, so 3 is refused naming the least limit
      const inFlight = await refusalOf(handle.executeUpdate(setLimitsUpdate, { args: [{ maxPages: 3 }] }));
      const set = await handle.executeUpdate(setLimitsUpdate, { args: [{ maxPages: 4 }] });
      p.open('fetchPages');
      return { zero, unknown, below, inFlight, set };
    });
    expect(seen.zero).toBe('maxPages must be a whole number ≥ 1, got 0');
    expect(seen.unknown).toBe('unsupported limit maxRows: setLimits takes maxPages');
    expect(seen.below).toBe('maxPages 1 is below the 2 pages already fetched and the up to 2 the call in flight may add: give 4 or more');
    expect(seen.inFlight).toBe('maxPages 3 is below the 2 pages already fetched and the up to 2 the call in flight may add: give 4 or more');
    expect(seen.set.maxPages).toBe(4);
    expect(result?.pages).toBe(4);
    expect(rowsOf(p)).toEqual({ [`${BUCKET}.users`]: 40 });
  });

  it('updates are refused once the extraction is loading', async () => {
    const p = project().hold('buildTableCsv');
    const { result, seen } = await runWith(p, input(config(['orders'])), async (handle) => {
      await p.waitFor('buildTableCsv');
      const refusals = [
        await refusalOf(handle.executeUpdate(pauseUpdate)),
        await refusalOf(handle.executeUpdate(extractCancelUpdate, { args: [{}] })),
        await refusalOf(handle.executeUpdate(setLimitsUpdate, { args: [{ maxPages: 9 }] })),
      ];
      p.open('buildTableCsv');
      return refusals;
    });
    expect(seen).toEqual([
      'cannot pause: the extraction is loading',
      'cannot cancel: the extraction is loading',
      'cannot set limits: the extraction is loading',
    ]);
    expect(result?.cancelled).toBe(false);
    expect(rowsOf(p)).toEqual({ [`${BUCKET}.orders`]: 10 });
  });
});

describe('extractWorkflow: outages and failure after commit (issue 36)', () => {
  // every call is retried for the run's outage budget (1 hour by default) beyond its own time, not a count of attempts
  const phases: Array<[string, ActivityName]> = [
    ['fetching pages (the extracted API down)', 'fetchPages'],
    ['finding the tables to load', 'findTable'],
    ["loading (the child import's Storage calls)", 'prepareImport'],
    ['storing the run state after the load', 'writeRunState'],
    ['removing the staging after the load', 'cleanStaging'],
  ];
  it.each(phases)('a one-hour outage while %s ends COMPLETED with every row loaded once', async (_phase, activity) => {
    const p = project();
    const started = await env.currentTimeMs();
    p.fail(activity, outage(started, started + HOUR));
    const result = await run(p, input(config(['users']), {}, { stateKey: 'k' }));
    expect(result.cancelled).toBe(false);
    expect(rowsOf(p)).toEqual({ [`${BUCKET}.users`]: 30 });
    expect(p.jobs.size).toBe(1);
    expect(p.callsOf(activity).at(-1)!.at).toBeGreaterThanOrEqual(started + HOUR);
  });

  it('a short blip while fetching is retried today: the batch resumes and every row is loaded once', async () => {
    const p = project();
    p.failTimes('fetchPages', 3, () => unavailable('GET https://api.example.com/users'));
    const result = await run(p, input(config(['users'])));
    expect(result.pages).toBe(3);
    expect(rowsOf(p)).toEqual({ [`${BUCKET}.users`]: 30 });
  });

  it('after commit, a run state write that keeps failing past its outage budget is a warning: the run completes, its rows loaded once', async () => {
    // the rows are committed: a failed run would invite a rerun that loads them again
    const p = project();
    p.fail('writeRunState', () => {
      throw ApplicationFailure.retryable('state store down', SapiErrorCode.SERVER_ERROR);
    });
    const result = await run(p, input(config(['users']), { outageBudgetMs: 10 * 60_000 }, { stateKey: 'k' }));
    expect(rowsOf(p)).toEqual({ [`${BUCKET}.users`]: 30 });
    expect(result.runState).toMatchObject({ stateKey: 'k', stored: null });
    expect(result.warnings.join('\n')).toContain('the run state k was not stored');
    expect(p.callsOf('writeRunState').length).toBeGreaterThan(5);
  });
});
