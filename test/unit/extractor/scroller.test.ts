import { createScrollerState, digestPage, nextStep } from '../../../src/extractor/scroller';
import { makeConfig } from './fake-api';

const config = makeConfig({
  pagination: { method: 'response.param', responseParam: 'meta.next', queryParam: 'cursor', forceStop: { pages: 10 } },
  http: { headers: { Authorization: 'Bearer t' } },
  jobs: [{ endpoint: 'items', params: { limit: 2 } }],
});
const job = config.config.jobs[0];

describe('scroller state', () => {
  it('starts with the first request, zero counters and no previous response', () => {
    const state = createScrollerState(job, config.api, 1_000);
    expect(state).toMatchObject({ jobId: '0', pages: 0, bytes: 0, records: 0, startedAtMs: 1_000, lastHash: null, stopReason: null });
    expect(state.next).toEqual({ method: 'GET', url: 'http://api.test/v1/items?limit=2', headers: { Authorization: 'Bearer t' } });
  });

  it('is plain JSON that survives a round trip through history', () => {
    let state = createScrollerState(job, config.api, 0);
    state = nextStep(state, { body: { items: [1, 2], meta: { next: 'c2' } }, bytes: 40, hash: 'h1', recordCount: 2 }, 5).state;
    const copy = JSON.parse(JSON.stringify(state));
    expect(copy).toEqual(state);
    const a = nextStep(state, { body: { meta: { next: 'c3' } }, bytes: 1, hash: 'h2', recordCount: 0 }, 6);
    const b = nextStep(copy, { body: { meta: { next: 'c3' } }, bytes: 1, hash: 'h2', recordCount: 0 }, 6);
    expect(b).toEqual(a);
    expect(JSON.stringify(state).length).toBeLessThan(1_000);
  });

  it('accepts a digest instead of the body, so workflows never see page data', () => {
    const state = createScrollerState(job, config.api, 0);
    const body = { items: [1], meta: { next: 'c2' } };
    const digest = digestPage(state, body);
    expect(digest).toEqual({ cursor: { found: true, value: 'c2' }, flag: null, limit: null });
    const withBody = nextStep(state, { body, bytes: 10, hash: 'h', recordCount: 1 }, 0);
    const withDigest = nextStep(state, { digest, bytes: 10, hash: 'h', recordCount: 1 }, 0);
    expect(withDigest).toEqual(withBody);
    expect(withDigest.next?.url).toBe('http://api.test/v1/items?cursor=c2');
  });

  it('counts pages, bytes and records, and keeps the hash of the last response', () => {
    const state = createScrollerState(job, config.api, 0);
    const step = nextStep(state, { body: { meta: { next: 'x' } }, bytes: 123, hash: 'abc', recordCount: 7 }, 0);
    expect(step.state).toMatchObject({ pages: 1, bytes: 123, records: 7, lastHash: 'abc' });
    expect(step.extractPage).toBe(true);
  });

  it('reports why it stopped and refuses another step', () => {
    const state = createScrollerState(job, config.api, 0);
    const step = nextStep(state, { body: { meta: { next: null } }, bytes: 1, hash: 'a', recordCount: 0 }, 0);
    expect(step).toMatchObject({ next: null, stopReason: 'empty-cursor', extractPage: true, warnings: [] });
    expect(() => nextStep(step.state, { body: {}, bytes: 1, hash: 'b', recordCount: 0 }, 0)).toThrow(/finished/);
  });

  it('does not warn when the cursor is present but null on the first page', () => {
    const state = createScrollerState(job, config.api, 0);
    expect(nextStep(state, { body: { meta: { next: null } }, bytes: 1, hash: 'a', recordCount: 0 }, 0).warnings).toEqual([]);
    expect(nextStep(state, { body: { meta: {} }, bytes: 1, hash: 'a', recordCount: 0 }, 0).warnings).toEqual([
      expect.stringContaining("responseParam 'meta.next' was not found in the first response (GET http://api.test/v1/items?limit=2)"),
    ]);
  });

  it('stops on a repeated response without counting or extracting it', () => {
    let state = createScrollerState(job, config.api, 0);
    state = nextStep(state, { body: { meta: { next: 'x' } }, bytes: 5, hash: 'same', recordCount: 1 }, 0).state;
    const step = nextStep(state, { body: { meta: { next: 'x' } }, bytes: 5, hash: 'same', recordCount: 1 }, 0);
    expect(step).toMatchObject({ stopReason: 'duplicate-response', extractPage: false });
    expect(step.state).toMatchObject({ pages: 1, bytes: 5, records: 1 });
  });
});

describe('scroller state of every paging method', () => {
  const methods: Array<[string, unknown, (n: number) => unknown]> = [
    ['offset', { method: 'offset', limit: 2, forceStop: { volume: 100_000 } }, (n) => ({ items: [{ id: n * 2 + 1 }, { id: n * 2 + 2 }] })],
    ['pagenum', { method: 'pagenum', limit: 2 }, (n) => ({ items: [{ id: n * 2 + 1 }, { id: n * 2 + 2 }] })],
    ['response.url', { method: 'response.url', urlKey: 'links.next' }, (n) => ({ items: [{ id: n }], links: { next: `items?page=${n + 2}` } })],
    ['zendesk.response.url', { method: 'zendesk.response.url' }, (n) => ({ items: [{ id: n }], next_page: `items?start_time=${n + 1}` })],
    ['cursor', { method: 'cursor', idKey: 'id', param: 'after' }, (n) => ({ items: [{ id: n * 2 + 1 }, { id: n * 2 + 2 }] })],
  ];

  it.each(methods)('%s: the state is plain JSON under 1 KB, and stepping from a copy or from the digest gives the same requests', (_name, pagination, body) => {
    const cfg = makeConfig({ pagination, jobs: [{ endpoint: 'items', dataField: 'items', params: { q: 'x' } }] });
    const j = cfg.config.jobs[0];
    let state = createScrollerState(j, cfg.api, 0);
    const urls: string[] = [state.next?.url ?? ''];
    for (let n = 0; n < 3; n++) {
      const b = body(n) as { items: unknown[] };
      const page = { bytes: 10, hash: `h${n}`, recordCount: b.items.length };
      const copy = JSON.parse(JSON.stringify(state));
      const withBody = nextStep(state, { ...page, body: b, records: b.items }, 1_000_000_000);
      const withDigest = nextStep(copy, { ...page, digest: JSON.parse(JSON.stringify(digestPage(state, b, b.items))) }, 1_000_000_000);
      expect(withDigest).toEqual(withBody);
      state = withBody.state;
      expect(JSON.stringify(state).length).toBeLessThan(1_000);
      urls.push(state.next?.url ?? '');
    }
    expect(new Set(urls).size).toBe(4);
  });

  it('offset, pagenum and cursor keep their position in the state (offset, page, lowest and highest id)', () => {
    const step = (pagination: unknown, items: unknown[]) => {
      const cfg = makeConfig({ pagination, jobs: [{ endpoint: 'items', dataField: 'items' }] });
      const state = createScrollerState(cfg.config.jobs[0], cfg.api, 0);
      return nextStep(state, { body: { items }, records: items, bytes: 1, hash: 'a', recordCount: items.length }, 0).state.position;
    };
    expect(step({ method: 'offset', limit: 1 }, [{ id: 1 }])).toEqual({ offset: 1 });
    expect(step({ method: 'pagenum', firstPage: 0 }, [{ id: 1 }])).toEqual({ page: 1 });
    expect(step({ method: 'cursor', idKey: 'id', param: 'p' }, [{ id: 4 }, { id: '2' }, { id: 9.7 }])).toEqual({ min: 2, max: 9 });
  });
});
