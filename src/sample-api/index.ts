/**
 * A sample paginated JSON API (fastify) for tests, the demo and the extraction benchmark. One function:
 * `createSampleApi({ port: 0 })` → `{ url, close(), requests, misbehave(), setDataset() }`.
 *
 * Pagination styles (page size `pageSize`, records from `dataset.ts`, all deterministic):
 * - cursor:      `GET /cursor/items?cursor=&limit=` → `{items, meta: {next_cursor}}`
 * - page number: `GET /pages/items?page=N&per_page=` → `{data, page, next_page: N+1 | null}`
 * - next link:   `GET /links/items?cursor=` → `{results, links: [{rel: 'next', cursor}]}` (`links.0.cursor`);
 *                `GET /links/next-url?after=` → `{results, links: {next: <absolute URL> | null}}`, the URL being
 *                sent back as a value (`?next=<url>`), never followed
 * - search:      `POST /search {query?, size?}` → `{hits, total, scroll_id}`, then
 *                `GET|POST /search/scroll?scroll_id=` (query, JSON or form body) until `scroll_id` is null
 * - children:    `GET /users?page=N` → `{users, next_page}`, `GET /users/{id}/orders?page=N` → `{orders, next_page}`
 * - large runs:  `GET /large/items?page=N` → `{items, next_page}` with 1–10 records per page generated on the fly,
 *                `largePages` pages (default 100 000), nothing stored
 * - wide fan-out: `GET /wide/parents?rows=R&pages=P&page=N` → `{parents, next_page}`: P pages (default 1) of R parent
 *                rows (default 1000, at most 200 000) `{id, name}`, ids counting on across pages; `GET
 *                /wide/parents/{id}/items` → `{items, next_page: null}`: `id % 3` items (`wideItemsOf`), one page; generated, nothing stored
 * - the reference's other paging methods, over `pagingRecords` items (`pagingItems`, ids 1..n), `{items}` pages:
 *   `GET /paging/offset?limit=&offset=` (offset), `GET /paging/pages?page=&per_page=` (pagenum, page 1 first),
 *   `GET /paging/cursor?since=&limit=` (ids above `since`; cursor), `GET /paging/next-url?after=` → `links.next` a
 *   relative URL repeating the other query params, or null (response.url), `GET /paging/incremental?start_time=` → `next_page` a root-relative URL
 *   whose `start_time` is the current time on the last page (zendesk.response.url stops there)
 * - dated events: `GET /events?from=YYYY-MM-DD&to=YYYY-MM-DD&page=N` → `{events, next_page}`: `eventsPerDay` events
 *                each day from `from` (inclusive) to `to` (exclusive), ids `<day>-<n>` (`datedEvents`), what a
 *                backfill's windows ask for; a missing or malformed bound is a 400 `{error}`
 */
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { datedEvents, largePage, makeUsers, ordersOf, pagingItems, wideItemsOf, wideParent } from './dataset';
import { HTML_ERROR_PAGE, Misbehaviour, type MisbehaveRule } from './misbehave';

export { datedEvents, largePage, largeRecordCount, makeUser, makeUsers, ordersOf, pagingItems, wideItemsOf, wideParent } from './dataset';
export type { DatedEvent, PagingItem, SampleOrder, SampleUser } from './dataset';
export type { MisbehaveRule, MisbehaviourKind } from './misbehave';

/** Options of `createSampleApi`. */
interface SampleApiOptions {
  /** Port to listen on; 0 (default) picks a free one. */
  port?: number;
  /** Default `127.0.0.1`. */
  host?: string;
  /** Number of generated users in the dataset (default 25). */
  records?: number;
  /** Records per page (default 10). */
  pageSize?: number;
  /** Orders per page of `/users/{id}/orders` (default 2). */
  ordersPageSize?: number;
  /** Pages of `/large/items` (default 100 000). */
  largePages?: number;
  /** Items of the `/paging/*` routes (default 100). */
  pagingRecords?: number;
  /** Events a day of `GET /events` (default 5). */
  eventsPerDay?: number;
  /** Keep a log of requests in `requests` (default true; turn off for big benchmark runs). */
  logRequests?: boolean;
  /**
   * Credentials every request (but `/health`) must carry, else 401 `{error}`: each header with exactly that value
   * (names case-insensitive) and each query param (or form/JSON body field of a POST) with exactly that value.
   * Default: none (open API).
   */
  requireAuth?: { headers?: Record<string, string>; query?: Record<string, string> };
}

/** One request the API saw. */
export interface SampleApiRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  query: Record<string, unknown>;
  body?: unknown;
  /** Path with the query string, as received. */
  url: string;
  /** The misbehaviour applied to this request, if any. */
  misbehaved?: MisbehaveRule['kind'];
}

/** A running sample API. */
export interface SampleApi {
  /** Base URL ending with `/` (use it as `api.baseUrl`). */
  url: string;
  /** Requests seen so far, in order (live array). */
  requests: SampleApiRequest[];
  /** Makes the next matching requests misbehave (see `MisbehaveRule`). */
  misbehave(rule: MisbehaveRule): void;
  /** Removes every misbehaviour rule. */
  behave(): void;
  /** Replaces the dataset served by the cursor, pages, links, search and users routes. */
  setDataset(records: ReadonlyArray<Record<string, unknown>>): void;
  /** Empties `requests`. */
  clearRequests(): void;
  close(): Promise<void>;
}

const encodeToken = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
function decodeToken(token: unknown): Record<string, unknown> | null {
  if (typeof token !== 'string' || token === '') return null;
  try {
    const value = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null ? value : null;
  } catch {
    return null;
  }
}
const positiveInt = (value: unknown, fallback: number) => {
  const n = Number(value);
  return Number.isInteger(n) && n > 0 ? n : fallback;
};

/** Starts the sample API. */
export async function createSampleApi(options: SampleApiOptions = {}): Promise<SampleApi> {
  const pageSize = options.pageSize ?? 10;
  const ordersPageSize = options.ordersPageSize ?? 2;
  const largePages = options.largePages ?? 100_000;
  const logRequests = options.logRequests ?? true;
  let records: ReadonlyArray<Record<string, unknown>> = makeUsers(options.records ?? 25) as unknown as Array<Record<string, unknown>>;
  const requests: SampleApiRequest[] = [];
  const faults = new Misbehaviour();
  const lastBodies = new Map<string, string>();
  let baseUrl = '';

  const app = Fastify({ logger: false });
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });

  const pathOf = (request: FastifyRequest) => request.url.split('?')[0];
  const sendJson = (request: FastifyRequest, reply: FastifyReply, value: unknown, status = 200) => {
    const text = JSON.stringify(value);
    if (status === 200) lastBodies.set(pathOf(request), text);
    return reply.code(status).type('application/json').send(text);
  };

  /** Why a request lacks the credentials of `requireAuth` (names what is missing, never the expected value). */
  const authProblem = (request: FastifyRequest): string | null => {
    const required = options.requireAuth;
    if (!required || pathOf(request) === '/health') return null;
    for (const [name, value] of Object.entries(required.headers ?? {})) {
      if (request.headers[name.toLowerCase()] !== value) return `Unauthorized: header ${name} missing or wrong`;
    }
    const body = typeof request.body === 'object' && request.body !== null ? (request.body as Record<string, unknown>) : {};
    const query = request.query as Record<string, unknown>;
    for (const [name, value] of Object.entries(required.query ?? {})) {
      if (query[name] !== value && body[name] !== value) return `Unauthorized: param ${name} missing or wrong`;
    }
    return null;
  };

  app.addHook('preHandler', async (request, reply) => {
    const path = pathOf(request);
    const rule = faults.take(path);
    if (logRequests) {
      requests.push({
        method: request.method,
        path,
        query: { ...(request.query as Record<string, unknown>) },
        ...(request.body !== undefined ? { body: request.body } : {}),
        url: request.url,
        ...(rule ? { misbehaved: rule.kind } : {}),
      });
    }
    const denied = authProblem(request);
    if (denied)
      return reply
        .code(401)
        .type('application/json')
        .send(JSON.stringify({ error: denied }));
    if (!rule) return;
    switch (rule.kind) {
      case 'server-error':
        return reply
          .code(rule.status ?? 500)
          .type('application/json')
          .send(JSON.stringify({ error: 'Internal Server Error (injected)' }));
      case 'rate-limit': {
        const retryAfter = rule.retryAfter === undefined ? '1' : rule.retryAfter;
        if (retryAfter !== null) reply.header('retry-after', String(retryAfter));
        return reply
          .code(rule.status ?? 429)
          .type('application/json')
          .send(JSON.stringify({ error: 'Too Many Requests (injected)' }));
      }
      case 'html':
        return reply
          .code(rule.status ?? 200)
          .type('text/html; charset=utf-8')
          .send(HTML_ERROR_PAGE);
      case 'invalid-json':
        return reply.code(200).type('application/json').send('{"items": [{"id": 1}, {"id": 2');
      case 'repeat': {
        const previous = lastBodies.get(path);
        if (previous === undefined) return; // nothing to repeat yet: answer normally
        return reply.code(200).type('application/json').send(previous);
      }
      case 'reset':
        reply.hijack();
        request.raw.socket.destroy();
        return reply;
    }
  });

  const slice = (offset: number, size: number) => records.slice(offset, offset + size);
  const nextOffset = (offset: number, size: number) => (offset + size < records.length ? offset + size : null);

  app.get('/health', async (request, reply) => sendJson(request, reply, { ok: true }));

  app.get('/events', async (request, reply) => {
    const q = request.query as Record<string, unknown>;
    const day = /^\d{4}-\d{2}-\d{2}$/;
    if (typeof q.from !== 'string' || !day.test(q.from) || typeof q.to !== 'string' || !day.test(q.to)) {
      return sendJson(request, reply, { error: `from and to must be dates (YYYY-MM-DD), got from=${String(q.from)} to=${String(q.to)}` }, 400);
    }
    const page = positiveInt(q.page, 1);
    const events = datedEvents(q.from, q.to, options.eventsPerDay ?? 5);
    const offset = (page - 1) * pageSize;
    return sendJson(request, reply, { events: events.slice(offset, offset + pageSize), next_page: offset + pageSize < events.length ? page + 1 : null });
  });

  app.get('/cursor/items', async (request, reply) => {
    const q = request.query as Record<string, unknown>;
    const offset = Number(decodeToken(q.cursor)?.o ?? 0);
    const size = positiveInt(q.limit, pageSize);
    const next = nextOffset(offset, size);
    return sendJson(request, reply, { items: slice(offset, size), meta: { next_cursor: next === null ? null : encodeToken({ o: next }) } });
  });

  app.get('/pages/items', async (request, reply) => {
    const q = request.query as Record<string, unknown>;
    const page = positiveInt(q.page, 1);
    const size = positiveInt(q.per_page, pageSize);
    const offset = (page - 1) * size;
    return sendJson(request, reply, { data: slice(offset, size), page, next_page: nextOffset(offset, size) === null ? null : page + 1 });
  });

  app.get('/links/items', async (request, reply) => {
    const offset = Number(decodeToken((request.query as Record<string, unknown>).cursor)?.o ?? 0);
    const next = nextOffset(offset, pageSize);
    return sendJson(request, reply, {
      results: slice(offset, pageSize),
      links: next === null ? [] : [{ rel: 'next', cursor: encodeToken({ o: next }) }],
    });
  });

  app.get('/links/next-url', async (request, reply) => {
    const q = request.query as Record<string, unknown>;
    let after = q.after;
    if (typeof q.next === 'string') after = new URL(q.next).searchParams.get('after') ?? undefined;
    const offset = Number(after ?? 0) || 0;
    const next = nextOffset(offset, pageSize);
    return sendJson(request, reply, {
      results: slice(offset, pageSize),
      links: { next: next === null ? null : `${baseUrl}links/next-url?after=${next}` },
    });
  });

  const searchPage = (request: FastifyRequest, reply: FastifyReply, query: string, offset: number, size: number) => {
    const matching = query === '' ? records : records.filter((r) => String(r.name ?? '').includes(query));
    const hits = matching.slice(offset, offset + size);
    const next = offset + size < matching.length ? offset + size : null;
    return sendJson(request, reply, { hits, total: matching.length, scroll_id: next === null ? null : encodeToken({ o: next, s: size, q: query }) });
  };

  app.post('/search', async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    return searchPage(request, reply, typeof body.query === 'string' ? body.query : '', 0, positiveInt(body.size, pageSize));
  });

  const scroll = async (request: FastifyRequest, reply: FastifyReply) => {
    const fromBody = (request.body ?? {}) as Record<string, unknown>;
    const token = decodeToken((request.query as Record<string, unknown>).scroll_id ?? fromBody.scroll_id);
    if (!token) return sendJson(request, reply, { error: 'Missing or invalid scroll_id' }, 400);
    return searchPage(request, reply, String(token.q ?? ''), Number(token.o), Number(token.s));
  };
  app.get('/search/scroll', scroll);
  app.post('/search/scroll', scroll);

  app.get('/users', async (request, reply) => {
    const page = positiveInt((request.query as Record<string, unknown>).page, 1);
    const offset = (page - 1) * pageSize;
    return sendJson(request, reply, { users: slice(offset, pageSize), next_page: nextOffset(offset, pageSize) === null ? null : page + 1 });
  });

  app.get('/users/:id/orders', async (request, reply) => {
    const id = Number((request.params as { id: string }).id);
    if (!records.some((r) => r.id === id)) return sendJson(request, reply, { error: `User ${id} not found` }, 404);
    const page = positiveInt((request.query as Record<string, unknown>).page, 1);
    const all = ordersOf(id);
    const offset = (page - 1) * ordersPageSize;
    const hasNext = offset + ordersPageSize < all.length;
    return sendJson(request, reply, { orders: all.slice(offset, offset + ordersPageSize), next_page: hasNext ? page + 1 : null });
  });

  app.get('/large/items', async (request, reply) => {
    const page = positiveInt((request.query as Record<string, unknown>).page, 1);
    if (page > largePages) return sendJson(request, reply, { items: [], next_page: null });
    return sendJson(request, reply, { items: largePage(page), next_page: page < largePages ? page + 1 : null });
  });

  app.get('/wide/parents', async (request, reply) => {
    const query = request.query as Record<string, unknown>;
    const rows = Math.min(positiveInt(query.rows, 1000), 200_000);
    const pages = positiveInt(query.pages, 1);
    const page = positiveInt(query.page, 1);
    const parents = page > pages ? [] : Array.from({ length: rows }, (_, i) => wideParent((page - 1) * rows + i + 1));
    return sendJson(request, reply, { parents, next_page: page < pages ? page + 1 : null });
  });

  app.get('/wide/parents/:id/items', async (request, reply) => {
    const id = positiveInt((request.params as { id: string }).id, 0);
    if (id === 0) return sendJson(request, reply, { error: 'Parent not found' }, 404);
    return sendJson(request, reply, { items: wideItemsOf(id), next_page: null });
  });

  // the reference's other paging methods (see the header)
  const items = pagingItems(options.pagingRecords ?? 100);
  const nonNegativeInt = (value: unknown, fallback: number) => {
    const n = Number(value);
    return Number.isInteger(n) && n >= 0 ? n : fallback;
  };
  /** Fake unix time of the item at `offset` for `/paging/incremental` (long ago, so never "too recent"). */
  const INCREMENTAL_EPOCH = 1_000_000;
  app.get('/paging/offset', async (request, reply) => {
    const q = request.query as Record<string, unknown>;
    const offset = nonNegativeInt(q.offset, 0);
    return sendJson(request, reply, { items: items.slice(offset, offset + positiveInt(q.limit, pageSize)) });
  });
  app.get('/paging/pages', async (request, reply) => {
    const q = request.query as Record<string, unknown>;
    const size = positiveInt(q.per_page, pageSize);
    const offset = (positiveInt(q.page, 1) - 1) * size;
    return sendJson(request, reply, { items: items.slice(offset, offset + size) });
  });
  app.get('/paging/cursor', async (request, reply) => {
    const q = request.query as Record<string, unknown>;
    const since = nonNegativeInt(q.since, 0);
    return sendJson(request, reply, { items: items.filter((item) => item.id > since).slice(0, positiveInt(q.limit, pageSize)) });
  });
  app.get('/paging/next-url', async (request, reply) => {
    const query = request.query as Record<string, unknown>;
    const after = nonNegativeInt(query.after, 0);
    const next = after + pageSize < items.length ? after + pageSize : null;
    // like many APIs, the next link repeats the other params of the request (an api_key too)
    const others = new URLSearchParams(Object.entries(query).filter(([k, v]) => k !== 'after' && typeof v === 'string') as Array<[string, string]>).toString();
    const link = next === null ? null : `paging/next-url?after=${next}${others === '' ? '' : `&${others}`}`;
    return sendJson(request, reply, { items: items.slice(after, after + pageSize), links: { next: link } });
  });
  app.get('/paging/incremental', async (request, reply) => {
    const startTime = nonNegativeInt((request.query as Record<string, unknown>).start_time, INCREMENTAL_EPOCH);
    const offset = Math.max(0, startTime - INCREMENTAL_EPOCH);
    const next = offset + pageSize < items.length ? INCREMENTAL_EPOCH + offset + pageSize : Math.floor(Date.now() / 1000);
    return sendJson(request, reply, { items: items.slice(offset, offset + pageSize), next_page: `/paging/incremental?start_time=${next}`, end_time: next });
  });

  await app.listen({ port: options.port ?? 0, host: options.host ?? '127.0.0.1' });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('sample API: no TCP address');
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  baseUrl = `http://${host}:${address.port}/`;

  return {
    url: baseUrl,
    requests,
    misbehave: (rule) => faults.add(rule),
    behave: () => faults.clear(),
    setDataset: (next) => {
      records = [...next];
    },
    clearRequests: () => {
      requests.length = 0;
    },
    close: async () => {
      await app.close();
    },
  };
}
