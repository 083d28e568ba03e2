/**
 * The durable run's traversal of the job tree, without Temporal: which job run fetches next, children before the
 * parent's next page, stop reasons, and the continue-as-new and rate-limit decisions.
 */
import type { ChildSpec, ChildrenRef, JobFrame } from '../../../src/extractor/checkpoint';
import {
  applyChildBatch,
  MAX_HISTORY_EVENTS,
  MAX_RATE_LIMIT_WAITS,
  nextJobRunToFetch,
  rateLimitAfterBatch,
  shouldContinueAsNew,
  startJobRun,
  type Traversal,
} from '../../../src/extractor/traversal';
import { makeConfig } from './fake-api';

const config = makeConfig({
  pagination: { method: 'response.param', responseParam: 'next', queryParam: 'cursor' },
  jobs: [
    { endpoint: 'users', dataField: 'users', children: [{ endpoint: 'users/{uid}/orders', dataField: 'orders', placeholders: { uid: 'id' } }] },
    { endpoint: 'tags', dataField: 'tags' },
  ],
});

const fresh = (): Traversal => ({ nextJob: 0, nextRunNo: 1, frames: [], stopReasons: {} });

const child = (uid: number): ChildSpec => ({
  jobId: '0.0',
  endpoint: `users/${uid}/orders`,
  parentColumns: { parent_id: String(uid) },
  parent: { id: uid } as never,
});

/** The staged child lists (stand-in for the stage store): reference key → specs. */
let staged = new Map<string, ChildSpec[]>();
beforeEach(() => (staged = new Map()));

/**
 * Hands a fetched page back un-stepped, as `fetchPages` does (`next` is the cursor the body carries), its child list
 * staged and referenced.
 */
function pageFetched(frame: JobFrame, next: string | null, children: ChildSpec[] = []): void {
  const pageNo = frame.state.pages + 1;
  const ref: ChildrenRef | undefined =
    children.length > 0 ? { key: `wf/run/children/r${frame.runNo}-p${pageNo}/`, count: children.length, next: 0 } : undefined;
  if (ref) staged.set(ref.key, children);
  frame.pending = {
    pageNo,
    result: { body: { next }, bytes: 10, hash: `h${frame.runNo}-${frame.state.pages}`, recordCount: 1 },
    ...(ref ? { children: ref } : {}),
  };
}

/** Ends a job run's pagination, as a batch that reached the end does. */
function runEnded(frame: JobFrame): void {
  frame.state = { ...frame.state, next: null, stopReason: 'empty-cursor' };
}

describe('the extraction traversal', () => {
  it('starts the top-level jobs in order, each as a new numbered run at the given time, then says every job is done', () => {
    const t = fresh();
    const first = nextJobRunToFetch(t, config, 1_000).frame!;
    expect(first).toMatchObject({ runNo: 1, jobId: '0', endpoint: 'users', parent: null, parentColumns: {}, pending: null });
    expect(first.state).toMatchObject({ startedAtMs: 1_000, pages: 0 });
    expect(first.state.next?.url).toBe('http://api.test/v1/users');
    expect(nextJobRunToFetch(t, config, 2_000).frame).toBe(first); // still paginating: the same run

    runEnded(first);
    const second = nextJobRunToFetch(t, config, 3_000).frame!;
    expect(second).toMatchObject({ runNo: 2, jobId: '1', endpoint: 'tags' });
    runEnded(second);
    expect(nextJobRunToFetch(t, config, 4_000)).toEqual({ frame: null, warnings: [] });
    expect(t).toMatchObject({ nextJob: 2, nextRunNo: 3, frames: [], stopReasons: { '0': { 'empty-cursor': 1 }, '1': { 'empty-cursor': 1 } } });
  });

  it("hands a page's children out as batches of its staged list, in order, before stepping the parent to its next page", () => {
    const t = fresh();
    const parent = nextJobRunToFetch(t, config, 0).frame!;
    pageFetched(parent, 'c2', [child(1), child(2), child(3)]);

    const first = nextJobRunToFetch(t, config, 0);
    expect(first.frame).toBeNull();
    expect(first.children).toEqual({ parent, ref: { key: 'wf/run/children/r1-p1/', count: 3, next: 0 }, firstRunNo: 2 });
    expect(parent.state.pages).toBe(0); // the parent waits
    // a call ran children 1 and 2 to their end (runs 2 and 3)
    applyChildBatch(t, first.children!, { done: 2, stopReasons: { '0.0': { 'empty-cursor': 2 } } });
    expect(t).toMatchObject({ nextRunNo: 4, frames: [parent], stopReasons: { '0.0': { 'empty-cursor': 2 } } });

    const second = nextJobRunToFetch(t, config, 0);
    expect(second.children).toMatchObject({ ref: { count: 3, next: 2 }, firstRunNo: 4 });
    applyChildBatch(t, second.children!, { done: 1, stopReasons: { '0.0': { 'no-pagination': 1 } } });

    const again = nextJobRunToFetch(t, config, 0).frame!;
    expect(again).toBe(parent);
    expect(parent).toMatchObject({ pending: null, state: { pages: 1 } });
    expect(parent.state.next?.url).toBe('http://api.test/v1/users?cursor=c2');
    expect(t.frames).toEqual([parent]);
    expect(t.nextRunNo).toBe(5); // every child run numbered as if run one by one
    expect(t.stopReasons).toEqual({ '0.0': { 'empty-cursor': 2, 'no-pagination': 1 } });
  });

  it('goes on with the child run a batch stopped inside as a run of its own, then with the rest of the list', () => {
    const t = fresh();
    const parent = nextJobRunToFetch(t, config, 0).frame!;
    pageFetched(parent, 'c2', [child(1), child(2), child(3)]);
    const batch = nextJobRunToFetch(t, config, 0).children!;
    // child 1 done (run 2); the call's page limit came in child 2 (run 3), its page 1 handed back un-stepped
    const openState = { ...parent.state, jobId: '0.0', pages: 0 };
    const pending = { pageNo: 1, result: { body: { next: 'o2' }, bytes: 3, hash: 'x', recordCount: 1 } };
    applyChildBatch(t, batch, { done: 1, stopReasons: { '0.0': { 'empty-cursor': 1 } }, open: { spec: child(2), state: openState, pending } });
    expect(t.nextRunNo).toBe(4);
    const open = nextJobRunToFetch(t, config, 0).frame!;
    expect(open).toMatchObject({ runNo: 3, jobId: '0.0', endpoint: 'users/2/orders', parentColumns: { parent_id: '2' }, pending: null, state: { pages: 1 } });
    expect(open.state.next?.url).toContain('cursor=o2');
    expect(parent.pending?.children).toMatchObject({ next: 2 });
    runEnded(open);

    const rest = nextJobRunToFetch(t, config, 0);
    expect(rest.children).toMatchObject({ parent, ref: { next: 2 }, firstRunNo: 4 });
    expect(staged.get(rest.children!.ref.key)![rest.children!.ref.next]).toEqual(child(3));
    expect(t.stopReasons).toEqual({ '0.0': { 'empty-cursor': 2 } });
  });

  it('keeps the checkpoint the same size whatever the number of parent rows (the list is staged, not carried)', () => {
    const sizeWith = (rows: number) => {
      const t = fresh();
      const parent = nextJobRunToFetch(t, config, 0).frame!;
      pageFetched(
        parent,
        'c2',
        Array.from({ length: rows }, (_, i) => child(i + 1)),
      );
      const batch = nextJobRunToFetch(t, config, 0).children!;
      applyChildBatch(t, batch, { done: Math.floor(rows / 2), stopReasons: { '0.0': { 'empty-cursor': Math.floor(rows / 2) } } });
      return JSON.stringify(t).length;
    };
    const small = sizeWith(10);
    expect(sizeWith(100_000)).toBeLessThan(small + 20); // a few more digits, not 100,000 specs
  });

  it('refuses an outcome that does not fit the batch it was handed out for', () => {
    const t = fresh();
    const parent = nextJobRunToFetch(t, config, 0).frame!;
    pageFetched(parent, 'c2', [child(1), child(2)]);
    const batch = nextJobRunToFetch(t, config, 0).children!;
    expect(() => applyChildBatch(t, batch, { done: 3, stopReasons: {} })).toThrow('3 runs done from 0 of 2');
    applyChildBatch(t, batch, { done: 1, stopReasons: {} });
    expect(() => applyChildBatch(t, batch, { done: 1, stopReasons: {} })).toThrow('the traversal moved');
  });

  it("pops a run whose last page's step ends pagination, and returns the step's warnings", () => {
    const t = fresh();
    const frame = nextJobRunToFetch(t, config, 0).frame!;
    frame.pending = { pageNo: 1, result: { body: { users: [] }, bytes: 5, hash: 'h', recordCount: 0 } };
    const next = nextJobRunToFetch(t, config, 0);
    expect(next.frame).toMatchObject({ jobId: '1', runNo: 2 });
    expect(next.warnings).toEqual([expect.stringContaining("responseParam 'next' was not found in the first response")]);
    expect(t.stopReasons).toEqual({ '0': { 'empty-cursor': 1 } });
  });

  it('counts a run without pagination as no-pagination', () => {
    const t = fresh();
    const frame = startJobRun(t, config, config.config.jobs[1]!, 'tags', {}, null, 0);
    frame.state = { ...frame.state, next: null };
    nextJobRunToFetch(t, { ...config, config: { ...config.config, jobs: [] } }, 0);
    expect(t.stopReasons).toEqual({ '1': { 'no-pagination': 1 } });
  });

  it('leaves a checkpoint that is plain JSON and carries on the same after a round trip', () => {
    const t = fresh();
    const parent = nextJobRunToFetch(t, config, 0).frame!;
    pageFetched(parent, 'c2', [child(7)]);
    const copy = JSON.parse(JSON.stringify(t)) as Traversal;
    expect(nextJobRunToFetch(copy, config, 5)).toEqual(nextJobRunToFetch(t, config, 5));
    expect(copy).toEqual(t);
  });
});

describe('continue-as-new before a batch', () => {
  const quiet = { continueAsNewSuggested: false, historyLength: 10 };
  it('happens when the server suggests it, past the history limit, or after the configured pages', () => {
    expect(shouldContinueAsNew(quiet, 1_000_000, null)).toBe(false);
    expect(shouldContinueAsNew({ ...quiet, continueAsNewSuggested: true }, 0, null)).toBe(true);
    expect(shouldContinueAsNew({ ...quiet, historyLength: MAX_HISTORY_EVENTS }, 0, null)).toBe(false);
    expect(shouldContinueAsNew({ ...quiet, historyLength: MAX_HISTORY_EVENTS + 1 }, 0, null)).toBe(true);
    expect(shouldContinueAsNew(quiet, 99, 100)).toBe(false);
    expect(shouldContinueAsNew(quiet, 100, 100)).toBe(true);
  });
});

describe('rate-limit waits', () => {
  it('waits as long as the API asked (at least 1 ms), and a batch with pages starts the count again', () => {
    expect(rateLimitAfterBatch(0, { pages: 0, rateLimitedMs: 7_000 })).toEqual({ waits: 1, waitMs: 7_000, giveUp: false });
    expect(rateLimitAfterBatch(3, { pages: 0, rateLimitedMs: 0 })).toEqual({ waits: 4, waitMs: 1, giveUp: false });
    expect(rateLimitAfterBatch(3, { pages: 2, rateLimitedMs: 10 })).toEqual({ waits: 1, waitMs: 10, giveUp: false });
    expect(rateLimitAfterBatch(3, { pages: 2 })).toEqual({ waits: 0, waitMs: null, giveUp: false });
    expect(rateLimitAfterBatch(3, { pages: 0 })).toEqual({ waits: 3, waitMs: null, giveUp: false }); // a repeated response
  });

  it(`gives up after ${MAX_RATE_LIMIT_WAITS} waits in a row without a page`, () => {
    let waits = 0;
    for (let i = 0; i < MAX_RATE_LIMIT_WAITS; i++) {
      const decision = rateLimitAfterBatch(waits, { pages: 0, rateLimitedMs: 100 });
      expect(decision.giveUp).toBe(false);
      waits = decision.waits;
    }
    expect(rateLimitAfterBatch(waits, { pages: 0, rateLimitedMs: 100 }).giveUp).toBe(true);
  });
});
