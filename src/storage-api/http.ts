/**
 * The HTTP transport of the Storage API client: one undici `Agent` (keep-alive, bounded connections per origin),
 * timeouts, the retry loop driven by {@link decideRetry}, error mapping to the registry, and zod validation of
 * every response. Every response body is consumed (read or dumped), even on errors.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { type Readable } from 'node:stream';
import type { Agent, Dispatcher } from 'undici';
import { type z } from 'zod';
import { httpStatusError, SapiError, SapiHttpError, SapiInvalidResponseError, SapiNetworkError, SapiTimeoutError, type RequestDescription } from '../errors';
import { attemptBudgetMs, type Deadline, parseRetryAfterMs, retryFits } from '../http';
import { undici } from '../undici-parts';
import { pathWithoutQuery, tracingOn, withSpan } from '../observability/spans';
import { classifyTransportError, decideRetry, DEFAULT_RETRY_POLICY, type AttemptOutcome, type RetryPolicy } from './retry-policy';
import { serviceErrorSchema } from './schemas';
import { storageRequestAttributes, storageResponseAttributes, storageSpanName } from './trace';

/** Timeouts of one HTTP exchange, in milliseconds. */
export interface HttpTimeouts {
  /** TCP+TLS connect. Default 10 000 ms. */
  connectMs: number;
  /** From request sent to response headers received. Default 120 000 ms (some endpoints are slow to answer). */
  headersMs: number;
  /** Maximum idle time between two body chunks. Default 300 000 ms. */
  bodyMs: number;
}

/** Defaults: connect 10 s, headers 120 s, body idle 300 s. */
export const DEFAULT_TIMEOUTS: Readonly<HttpTimeouts> = Object.freeze({ connectMs: 10_000, headersMs: 120_000, bodyMs: 300_000 });

/** Maximum sockets per origin of the default agent. Default 32 (200 concurrent imports share them). */
export const DEFAULT_CONNECTIONS_PER_ORIGIN = 32;
/** Idle keep-alive of the default agent's sockets. Default 30 000 ms. */
export const DEFAULT_KEEP_ALIVE_MS = 30_000;
/** Sent as `User-Agent`. */
export const USER_AGENT = 'sapi-temporal/0.1';

/** Creates the default dispatcher: an undici `Agent` with keep-alive and bounded connections. */
export function createDefaultDispatcher(options: { connectMs?: number; connections?: number; keepAliveMs?: number } = {}): Agent {
  return new undici.Agent({
    connections: options.connections ?? DEFAULT_CONNECTIONS_PER_ORIGIN,
    keepAliveTimeout: options.keepAliveMs ?? DEFAULT_KEEP_ALIVE_MS,
    connect: { timeout: options.connectMs ?? DEFAULT_TIMEOUTS.connectMs },
  });
}

/** A query value; arrays are sent as `name[]=a&name[]=b`. */
export type QueryValue = string | number | boolean | undefined | null | readonly (string | number)[];

/** A request body made fresh for every attempt (streams cannot be replayed). */
interface BodyFactory {
  /** Returns the body and its headers (`content-type`, maybe `content-length`). */
  (): { body: Readable | string | Buffer; headers: Record<string, string> };
}

interface HttpRequest<S extends z.ZodType> {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'HEAD';
  /** Path under the base URL (`/v2/storage/...`), or an absolute URL (the importer, a job's `url`). */
  path: string;
  query?: Record<string, QueryValue>;
  /** JSON body. */
  json?: unknown;
  /** Any other body (multipart). */
  body?: BodyFactory;
  schema: S;
  /** Replaying is safe. GET/HEAD/DELETE/PUT default to true, POST to false. */
  idempotent?: boolean;
  /** Accepted success statuses. Default: any 2xx. */
  expect?: readonly number[];
  /** Allow retries at all (false for a one-shot stream body). Default true. */
  retries?: boolean;
  /** `X-KBC-RunId` of this request (the service records it on the jobs and files it creates); overrides the transport's. */
  runId?: string;
  signal?: AbortSignal;
}

interface HttpResponse<T> {
  status: number;
  data: T;
  headers: Record<string, string | string[] | undefined>;
  attempts: number;
}

export interface HttpTransportOptions {
  /** Base URL of the service, e.g. `https://connection.keboola.com`. */
  url: string;
  token: string;
  runId?: string;
  timeouts: HttpTimeouts;
  retry: RetryPolicy;
  dispatcher: Dispatcher;
  /** Called before each retry; for logs and tests. */
  onRetry?: (info: { request: RequestDescription; attempt: number; delayMs: number; reason: string }) => void;
  /**
   * The end of the time a request has, its retries included (the activity attempt's, see `activityDeadline()` of
   * the activities): no attempt outlasts it, and no retry starts that would not leave its attempt a second before it.
   * Asked at each request; undefined: only the retry policy bounds it.
   */
  deadline?: Deadline;
}

export interface HttpTransport {
  request<S extends z.ZodType>(req: HttpRequest<S>): Promise<HttpResponse<z.output<S>>>;
  readonly baseUrl: string;
}

export function createHttpTransport(options: HttpTransportOptions): HttpTransport {
  const base = new URL(options.url);
  const basePath = base.pathname.replace(/\/+$/, '');
  const policy = options.retry ?? DEFAULT_RETRY_POLICY;

  function resolve(path: string, query?: Record<string, QueryValue>): { origin: string; path: string } {
    let origin = base.origin;
    let fullPath: string;
    if (/^https?:\/\//i.test(path)) {
      const u = new URL(path);
      origin = u.origin;
      fullPath = u.pathname + u.search;
    } else {
      fullPath = basePath + (path.startsWith('/') ? path : `/${path}`);
    }
    const qs = encodeQuery(query);
    if (qs) fullPath += (fullPath.includes('?') ? '&' : '?') + qs;
    return { origin, path: fullPath };
  }

  /** One span per request (its retries included) while tracing is on: the ids it names and the answer's. */
  function request<S extends z.ZodType>(req: HttpRequest<S>): Promise<HttpResponse<z.output<S>>> {
    if (!tracingOn()) return send(req);
    const target = resolve(req.path, req.query);
    const attributes = {
      'http.request.method': req.method,
      'server.address': new URL(target.origin).hostname,
      'url.path': pathWithoutQuery(target.path),
      ...storageRequestAttributes(target.path, req.json),
    };
    return withSpan(storageSpanName(req.method, target.path), attributes, async (span) => {
      try {
        const res = await send(req);
        span.set({ 'http.response.status_code': res.status, 'sapi.attempts': res.attempts, ...storageResponseAttributes(target.path, res.data) });
        return res;
      } catch (err) {
        if ((err instanceof SapiHttpError || err instanceof SapiTimeoutError) && err.status !== undefined)
          span.set({ 'http.response.status_code': err.status, 'sapi.error_code': err.serviceCode });
        throw err;
      }
    });
  }

  async function send<S extends z.ZodType>(req: HttpRequest<S>): Promise<HttpResponse<z.output<S>>> {
    const target = resolve(req.path, req.query);
    const desc: RequestDescription = { method: req.method, path: target.path };
    const idempotent = req.idempotent ?? req.method !== 'POST';
    const maxAttempts = req.retries === false ? 1 : policy.maxAttempts;
    const deadlineMs = options.deadline?.();

    for (let attempt = 1; ; attempt++) {
      req.signal?.throwIfAborted();
      // the attempt ends by the deadline: its wait for headers and for each body chunk are clipped to what is left
      const budgetMs = attemptBudgetMs(deadlineMs, Date.now());
      const headersMs = budgetMs === undefined ? options.timeouts.headersMs : Math.max(1, Math.min(options.timeouts.headersMs, budgetMs));
      const bodyMs = budgetMs === undefined ? options.timeouts.bodyMs : Math.max(1, Math.min(options.timeouts.bodyMs, budgetMs));
      const headers: Record<string, string> = {
        'x-storageapi-token': options.token,
        'user-agent': USER_AGENT,
        accept: 'application/json',
      };
      const runId = req.runId ?? options.runId;
      if (runId) headers['x-kbc-runid'] = runId;
      let body: Readable | string | Buffer | undefined;
      if (req.json !== undefined) {
        body = JSON.stringify(req.json);
        headers['content-type'] = 'application/json';
      } else if (req.body) {
        const made = req.body();
        body = made.body;
        Object.assign(headers, made.headers);
      }

      let outcome: AttemptOutcome;
      let failure: (mayHaveReachedService: boolean) => SapiError;
      try {
        const res = await options.dispatcher.request({
          origin: target.origin,
          path: target.path,
          method: req.method,
          headers,
          body,
          headersTimeout: headersMs,
          bodyTimeout: bodyMs,
          signal: req.signal,
        });
        const text = req.method === 'HEAD' ? '' : await res.body.text();
        const status = res.statusCode;
        const ok = req.expect ? req.expect.includes(status) : status >= 200 && status < 300;
        if (ok) {
          return { status, data: parseBody(req.schema, text, status, res.headers, desc, idempotent), headers: res.headers, attempts: attempt };
        }
        if (status >= 200 && status < 300) {
          // A 2xx we did not expect: the operation was probably performed, do not replay.
          throw new SapiInvalidResponseError({
            request: desc,
            status,
            problem: `unexpected status ${status}, expected ${req.expect?.join('/')}`,
            body: text,
            mayHaveReachedService: !idempotent,
          });
        }
        const retryAfter = headerValue(res.headers['retry-after']);
        outcome = { kind: 'status', status, retryAfter };
        failure = (mayHaveReachedService) => httpError(desc, status, text, retryAfter, mayHaveReachedService);
      } catch (err) {
        // A body stream undici did not consume still holds its file descriptor.
        if (body !== undefined && typeof body === 'object' && 'destroy' in body && !body.destroyed) body.destroy();
        if (err instanceof SapiError) throw err;
        if (req.signal?.aborted) throw req.signal.reason ?? err;
        const cls = classifyTransportError(err);
        outcome = { kind: 'network', reach: cls.reach, retryable: cls.retryable };
        failure = (mayHaveReachedService) =>
          cls.kind === 'timeout'
            ? new SapiTimeoutError({
                request: desc,
                phase: cls.phase ?? 'headers',
                timeoutMs: cls.phase === 'connect' ? options.timeouts.connectMs : cls.phase === 'body' ? bodyMs : headersMs,
                cause: err,
                mayHaveReachedService,
              })
            : new SapiNetworkError({ request: desc, cause: err, mayHaveReachedService, retryable: cls.retryable, url: target.origin });
      }

      const decision = decideRetry({ outcome, attempt, idempotent, policy: { ...policy, maxAttempts } });
      if (!decision.retry) throw failure(decision.mayHaveReachedService && !idempotent);
      // a retry that cannot finish before the deadline is left to the activity's retry (a fresh attempt, a fresh
      // budget); a retry the policy allows was safe to replay, so the request did not take effect
      if (!retryFits(deadlineMs, Date.now(), decision.delayMs)) throw failure(false);
      options.onRetry?.({ request: desc, attempt, delayMs: decision.delayMs, reason: decision.reason });
      await sleep(decision.delayMs, undefined, req.signal ? { signal: req.signal } : undefined);
    }
  }

  return { request, baseUrl: base.origin + basePath };
}

function parseBody<S extends z.ZodType>(
  schema: S,
  text: string,
  status: number,
  headers: Record<string, string | string[] | undefined>,
  desc: RequestDescription,
  idempotent: boolean,
): z.output<S> {
  let json: unknown = undefined;
  if (text.trim() !== '') {
    try {
      json = JSON.parse(text);
    } catch (cause) {
      const type = headerValue(headers['content-type']) ?? 'no content-type';
      const html = /html/i.test(type) || /^\s*</.test(text);
      throw new SapiInvalidResponseError({
        request: desc,
        status,
        problem: `expected JSON, got ${html ? 'HTML' : 'unparseable text'} (${type})` + (idempotent ? '' : '; the request may have been performed'),
        body: text,
        // An HTML page in place of JSON is usually a proxy or maintenance page: worth retrying later.
        retryable: html,
        mayHaveReachedService: !idempotent,
        cause,
      });
    }
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    throw new SapiInvalidResponseError({
      request: desc,
      status,
      problem: `unexpected response shape: ${summarizeIssues(parsed.error)}`,
      body: text,
      retryable: false,
      mayHaveReachedService: !idempotent,
    });
  }
  return parsed.data;
}

/** Builds the registry error for a non-2xx answer, reading the service's error body when it has one. */
function httpError(
  desc: RequestDescription,
  status: number,
  text: string,
  retryAfter: string | undefined,
  mayHaveReachedService: boolean,
): SapiHttpError | SapiTimeoutError {
  let serviceCode: string | undefined;
  let serviceMessage: string | undefined;
  let exceptionId: string | undefined;
  let details: Record<string, unknown> | undefined;
  try {
    const parsed = serviceErrorSchema.safeParse(JSON.parse(text));
    if (parsed.success) {
      const b = parsed.data;
      serviceCode = b.code === undefined || b.code === null || b.code === '' ? undefined : String(b.code);
      serviceMessage = b.error ?? b.message ?? b.reason;
      exceptionId = b.exceptionId ?? undefined;
      if (b.status === 'maintenance') details = { maintenance: true, estimatedEndTime: b.estimatedEndTime ?? undefined };
    }
  } catch {
    // not JSON: the excerpt goes into the message
  }
  const retryAfterMs = retryAfter !== undefined ? parseRetryAfterMs(retryAfter) : undefined;
  return httpStatusError({
    request: desc,
    status,
    serviceCode,
    serviceMessage,
    exceptionId,
    retryAfterMs,
    bodyExcerpt: serviceMessage === undefined ? text.slice(0, 400) : undefined,
    mayHaveReachedService,
    details,
  });
}

function summarizeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((i) => `${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`)
    .join('; ');
}

function headerValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/** Encodes a query; arrays become `name[]=v`, undefined/null are skipped, booleans become `1`/`0`. */
function encodeQuery(query?: Record<string, QueryValue>): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined || v === null) continue;
    if (Array.isArray(v)) for (const item of v) params.append(`${k}[]`, String(item));
    else if (typeof v === 'boolean') params.append(k, v ? '1' : '0');
    else params.append(k, String(v));
  }
  return params.toString();
}
