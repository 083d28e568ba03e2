/**
 * Sends one extractor request with undici and decodes the JSON answer. NOT workflow-safe (undici, node:crypto):
 * call it from activities or the plain loop.
 *
 * - 5xx, 408 and network errors are retried with capped exponential backoff and full jitter (few attempts).
 * - 429/503 with `Retry-After`: waited inline when short (≤ `maxInlineRetryAfterMs`), otherwise an
 *   `ExtractRateLimitedError` carrying `retryAfterMs` is thrown at once so the caller can wait on a durable timer.
 *   429 without the header is backed off like a 5xx, then thrown as `ExtractRateLimitedError`.
 * - A body that is not JSON throws `ExtractNotJsonError` naming the URL, the status and the body's first 200 chars.
 * - Every undici body is consumed (read or dumped), so connections go back to the pool.
 *
 * `options.client` (the configuration's `HttpClientConfig`, secrets already resolved) changes this per API:
 * `retry` (`api.retryConfig`) replaces the retry rules above with the reference's (statuses in `codes`, 2xx included,
 * retried `maxRetries` times, waiting what `retryHeader` says or 1 s × 2^(n-1); the last answer is then used as it
 * is, so a 202 still retried after `maxRetries` is data); `ignoreErrors` statuses give their body as data (`{"errorData":
 * body}` when it is not JSON) instead of failing; timeouts, TLS (CA, client certificate) and AWS SigV4 signing.
 *
 * Redirects (300, 301, 302, 303, 307, 308; at most `maxRedirections`) are followed here, one hop at a time, whatever
 * the dispatcher: before a hop is sent, the worker's allow-list (`policy`) is checked on its whole URL and
 * `checkRedirect` may refuse it (a bound secret must not follow a redirect to a host it is not bound to); a refusal
 * throws before anything is sent to the new URL.
 */
import { createHash } from 'node:crypto';
import { setTimeout as sleepFor } from 'node:timers/promises';
import { request, type Dispatcher } from 'undici';
import { ExtractHttpStatusError, ExtractNetworkError, ExtractNotJsonError, ExtractRateLimitedError } from '../errors';
import type { HttpClientConfig, RequestDescriptor } from '../types';
import { backoffDelayMs, defaultHttpPools, parseRetryAfterMs, redactUrl } from '../../http';
import { MAX_REDIRECTIONS } from '../../http/pools';
import { SapiInputForbiddenError } from '../../errors';
import { resolveClientSecrets } from '../http-client';
import { resolveRequestSecrets, scrubError, type SecretSource } from '../secrets';
import { signAwsRequest } from './aws-sign';
import { dispatcherFor } from './tls';
import { forbiddenCause } from '../../security/network';
import { assertRedirectKeepsSecrets, assertSecretsBound } from '../secret-hosts';
import { urlAllowed, type InputPolicy } from '../../security/policy';

/** Options of the page fetcher; every field has a documented default. */
export interface FetchPageOptions {
  /** Attempts in total (first included) for 5xx, 408, 429 and network errors. Default 4. */
  maxAttempts?: number;
  /** Backoff base in ms (the n-th retry waits up to base × 2^(n-1)). Default 250. */
  baseDelayMs?: number;
  /** Cap of one backoff delay in ms. Default 5 000. */
  maxDelayMs?: number;
  /** Longest `Retry-After` waited inline, in ms; longer asks throw `ExtractRateLimitedError`. Default 5 000. */
  maxInlineRetryAfterMs?: number;
  /** Time to receive the response headers, ms. Default 30 000. */
  headersTimeoutMs?: number;
  /** Longest pause between body chunks, ms. Default 60 000. */
  bodyTimeoutMs?: number;
  /** Largest body accepted, bytes. Default 64 MiB. */
  maxBodyBytes?: number;
  /** Dispatcher (connection pool); default: the process's `defaultHttpPools().extractor` (the plugin passes its own). */
  dispatcher?: Dispatcher;
  /** Cancels the request and any backoff wait. */
  signal?: AbortSignal;
  /** The worker's input policy: pools of their own (TLS settings) check every connection against it, as `dispatcher` does. */
  policy?: InputPolicy;
  /** How this API is called (`api.retryConfig`, `api.http.*`, TLS, AWS signing), secrets resolved. Default: none. */
  client?: HttpClientConfig;
  /** Redirects followed per request, each hop checked (see the module doc). Default {@link MAX_REDIRECTIONS} (5). */
  maxRedirections?: number;
  /**
   * Called before a redirect is followed, with where it leads; throwing refuses it (nothing is sent to `to`). The
   * secret binding uses it (`send-request.ts`). Default: every redirect the policy allows is followed.
   */
  checkRedirect?: (hop: RedirectHop) => void;
  /** `text`: the body is returned as a string, not decoded (login responses with `format: "text"`). Default `json`. */
  responseFormat?: 'json' | 'text';
  /** Called before each retry (for logs/heartbeats). */
  onRetry?: (info: { attempt: number; delayMs: number; reason: string; url: string }) => void;
  /** Test seams. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  random?: () => number;
  now?: () => number;
}

/** Defaults of `FetchPageOptions`. */
const DEFAULT_FETCH_PAGE_OPTIONS = Object.freeze({
  maxAttempts: 4,
  baseDelayMs: 250,
  maxDelayMs: 5_000,
  maxInlineRetryAfterMs: 5_000,
  headersTimeoutMs: 30_000,
  bodyTimeoutMs: 60_000,
  maxBodyBytes: 64 * 1024 * 1024,
});

/** A redirect about to be followed. */
interface RedirectHop {
  /** The URL that answered with the redirect. */
  from: URL;
  /** Where the redirect leads (its `Location`, resolved against `from`). */
  to: URL;
  /** The redirect's status (301, 302, …). */
  status: number;
}

/** Statuses followed as redirects (undici's set). */
const REDIRECT_STATUSES = new Set([300, 301, 302, 303, 307, 308]);

/** A fetched page. */
export interface FetchPageResult {
  /** The decoded JSON body. */
  body: unknown;
  /** Size of the raw body in bytes. */
  bytes: number;
  /** SHA-256 of the raw body, hex (identical responses stop pagination). */
  hash: string;
  status: number;
  /** Attempts it took (1 = no retry). */
  attempts: number;
}

const SNIPPET_CHARS = 200;

/** The whole body (at most `maxBytes`): one promise per body, not one per chunk (pages are many and small). */
function readBody(body: Dispatcher.ResponseData['body'], maxBytes: number, url: string): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    body.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        body.destroy();
        reject(new ExtractNetworkError(`${url}: response body is larger than ${maxBytes} bytes`, { url }));
        return;
      }
      chunks.push(chunk);
    });
    body.on('end', () => resolve(Buffer.concat(chunks, size)));
    body.on('error', reject);
  });
}

function snippet(raw: Buffer): string {
  const text = raw.subarray(0, SNIPPET_CHARS * 4).toString('utf8');
  const cut = text.length > SNIPPET_CHARS ? `${text.slice(0, SNIPPET_CHARS)}…` : text;
  const oneLine = cut.replace(/\s+/g, ' ').trim();
  return oneLine === '' ? '(empty body)' : `body starts with: ${oneLine}`;
}

function requestBody(descriptor: RequestDescriptor): string | undefined {
  if (!descriptor.body) return undefined;
  return descriptor.body.kind === 'json' ? JSON.stringify(descriptor.body.value) : descriptor.body.value;
}

function withDefaultHeaders(headers: Record<string, string>): Record<string, string> {
  const has = (name: string) => Object.keys(headers).some((k) => k.toLowerCase() === name);
  return {
    ...(has('accept') ? {} : { accept: 'application/json' }),
    ...(has('user-agent') ? {} : { 'user-agent': 'sapi-temporal-extractor' }),
    ...headers,
  };
}

function isAbort(error: unknown, signal?: AbortSignal): boolean {
  return signal?.aborted === true || (error instanceof Error && error.name === 'AbortError');
}

/** The first value of a response header (undici gives arrays for repeated headers). */
function headerValue(headers: Dispatcher.ResponseData['headers'], name: string): string | undefined {
  const value = headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The reference's retry delay (juicer `RetryHandler`): the header's seconds, or a Unix timestamp (a number larger
 * than now minus a day), or an HTTP date; else 1 s × 2^(retry-1).
 */
export function referenceRetryDelayMs(header: string | undefined, retry: number, nowMs: number): number {
  const text = header?.trim() ?? '';
  let delayMs: number | undefined;
  if (/^\d+(\.\d+)?$/.test(text)) {
    const value = Math.trunc(Number(text));
    delayMs = value < nowMs / 1000 - 86_400 ? value * 1000 : (value - Math.trunc(nowMs / 1000)) * 1000;
  } else if (text !== '') {
    delayMs = parseRetryAfterMs(text, nowMs);
  }
  return delayMs !== undefined && delayMs > 0 ? delayMs : 1000 * 2 ** (retry - 1);
}

/** The headers to send: the descriptor's plus, with AWS signing, the SigV4 ones. */
async function headersToSend(descriptor: RequestDescriptor, payload: string | undefined, client: HttpClientConfig | undefined, now: number) {
  const headers = withDefaultHeaders(descriptor.headers);
  if (!client?.awsSignature) return headers;
  return signAwsRequest({ method: descriptor.method, url: descriptor.url, headers, body: payload }, client.awsSignature, new Date(now));
}

/** A signal that aborts with the caller's or after `timeoutMs` (the request timeout, which counts as a network error). */
function attemptSignal(signal: AbortSignal | undefined, timeoutMs: number | null): AbortSignal | undefined {
  if (timeoutMs === null) return signal;
  const timeout = AbortSignal.timeout(timeoutMs);
  return signal ? AbortSignal.any([signal, timeout]) : timeout;
}

/** Sends `descriptor` and returns the decoded JSON page (see the module doc for retries and errors). */
export async function fetchPage(descriptor: RequestDescriptor, options: FetchPageOptions = {}): Promise<FetchPageResult> {
  const o = { ...DEFAULT_FETCH_PAGE_OPTIONS, ...stripUndefined(options) };
  const sleep = options.sleep ?? ((ms: number, signal?: AbortSignal) => sleepFor(ms, undefined, { signal }));
  const random = options.random ?? Math.random;
  const now = options.now ?? Date.now;
  const shownUrl = redactUrl(descriptor.url);
  const where = `${descriptor.method} ${shownUrl}`;
  const payload = requestBody(descriptor);
  const client = options.client;
  const referenceRetry = client?.retry ?? null;
  const maxAttempts = referenceRetry ? referenceRetry.maxRetries + 1 : o.maxAttempts;
  const timeoutMs = client?.requestTimeoutMs ?? null;
  const dispatcher = dispatcherFor(
    { caCertificate: client?.caCertificate ?? null, clientCertificate: client?.clientCertificate ?? null, connectTimeoutMs: client?.connectTimeoutMs ?? null },
    options.dispatcher ?? defaultHttpPools().extractor,
    options.policy,
  );
  /** Answers with an `ignoreErrors` status are data. */
  const ignored = (status: number) => client?.ignoreErrors.includes(status) === true;

  const retry = async (attempt: number, delayMs: number, reason: string) => {
    options.onRetry?.({ attempt, delayMs, reason, url: shownUrl });
    await sleep(delayMs, options.signal);
  };

  for (let attempt = 1; ; attempt++) {
    const last = attempt >= maxAttempts;
    let response: Dispatcher.ResponseData<unknown>;
    const signal = attemptSignal(options.signal, timeoutMs);
    try {
      response = await requestFollowingRedirects(
        descriptor.url,
        {
          method: descriptor.method,
          headers: client?.awsSignature ? await headersToSend(descriptor, payload, client, now()) : withDefaultHeaders(descriptor.headers),
          body: payload,
          dispatcher,
          headersTimeout: timeoutMs ?? o.headersTimeoutMs,
          bodyTimeout: timeoutMs ?? o.bodyTimeoutMs,
          signal,
        },
        options.maxRedirections ?? MAX_REDIRECTIONS,
        (hop) => {
          if (hop.to.protocol !== 'http:' && hop.to.protocol !== 'https:') {
            throw new SapiInputForbiddenError(
              'extraction request',
              `${hop.from.host} redirected the request (HTTP ${hop.status}) to a ${hop.to.protocol} URL; only http:// and https:// are followed`,
            );
          }
          if (options.policy && !urlAllowed(options.policy, hop.to)) {
            throw new SapiInputForbiddenError(
              'extraction request',
              `${hop.from.host} redirected the request (HTTP ${hop.status}) to ${redactUrl(hop.to.origin + hop.to.pathname)}, which is not on the worker's allow-list (SAPI_ALLOWED_URLS); the redirect was not followed`,
            );
          }
          options.checkRedirect?.(hop);
        },
      );
    } catch (error) {
      if (isAbort(error, options.signal)) throw error;
      // the worker's input policy refused the connection or a redirect: nothing was sent, and a retry would be refused too
      const forbidden = forbiddenCause(error);
      if (forbidden) throw forbidden;
      const reason = `network error: ${(error as Error).message}`;
      if (last) throw new ExtractNetworkError(`${where} failed after ${attempt} attempts: ${(error as Error).message}`, { url: shownUrl, cause: error });
      await retry(attempt, backoffDelayMs(attempt, o.baseDelayMs, o.maxDelayMs, random), reason);
      continue;
    }

    const status = response.statusCode;
    let raw: Buffer;
    try {
      raw = await readBody(response.body, o.maxBodyBytes, where);
    } catch (error) {
      if (options.signal?.aborted === true || error instanceof ExtractNetworkError) throw error;
      if (last)
        throw new ExtractNetworkError(`${where}: reading the body failed after ${attempt} attempts: ${(error as Error).message}`, {
          url: shownUrl,
          cause: error,
        });
      await retry(attempt, backoffDelayMs(attempt, o.baseDelayMs, o.maxDelayMs, random), `body read error: ${(error as Error).message}`);
      continue;
    }

    // a login response with `format: "text"` is returned as a string, not decoded
    const asText = () => ({ body: raw.toString('utf8'), bytes: raw.length, hash: createHash('sha256').update(raw).digest('hex'), status, attempts: attempt });
    if (referenceRetry) {
      if (referenceRetry.codes.includes(status) && !last) {
        const delayMs = referenceRetryDelayMs(headerValue(response.headers, referenceRetry.retryHeader), attempt, now());
        if (delayMs > o.maxInlineRetryAfterMs) {
          throw new ExtractRateLimitedError(`${where} answered HTTP ${status} asking to retry after ${delayMs} ms (attempt ${attempt}).`, {
            status,
            url: shownUrl,
            retryAfterMs: delayMs,
          });
        }
        await retry(attempt, delayMs, `HTTP ${status} (retryConfig)`);
        continue;
      }
      if (status >= 200 && status < 300 && options.responseFormat === 'text') return asText();
      if ((status >= 200 && status < 300) || ignored(status)) return decode(raw, status, attempt, where, shownUrl, ignored(status));
      throw new ExtractHttpStatusError(`${where} answered HTTP ${status} after ${attempt} attempts: ${snippet(raw)}`, {
        status,
        url: shownUrl,
        retryable: status >= 500 && status !== 501,
      });
    }
    if (status >= 200 && status < 300) return options.responseFormat === 'text' ? asText() : decode(raw, status, attempt, where, shownUrl, ignored(status));
    if (ignored(status) && (last || !(status === 429 || status === 408 || status >= 500))) return decode(raw, status, attempt, where, shownUrl, true);

    const retryAfterMs = parseRetryAfterMs(response.headers['retry-after'], now());
    if ((status === 429 || status === 503) && retryAfterMs !== undefined) {
      if (retryAfterMs > o.maxInlineRetryAfterMs || last) {
        throw new ExtractRateLimitedError(`${where} answered HTTP ${status} asking to retry after ${retryAfterMs} ms (attempt ${attempt}).`, {
          status,
          url: shownUrl,
          retryAfterMs,
        });
      }
      await retry(attempt, retryAfterMs, `HTTP ${status} with Retry-After`);
      continue;
    }
    if (status === 429 || status === 408 || status >= 500) {
      const delayMs = backoffDelayMs(attempt, o.baseDelayMs, o.maxDelayMs, random);
      if (!last) {
        await retry(attempt, delayMs, `HTTP ${status}`);
        continue;
      }
      if (status === 429) {
        throw new ExtractRateLimitedError(`${where} answered HTTP 429 after ${attempt} attempts: ${snippet(raw)}`, {
          status,
          url: shownUrl,
          retryAfterMs: delayMs,
        });
      }
      throw new ExtractHttpStatusError(`${where} answered HTTP ${status} after ${attempt} attempts: ${snippet(raw)}`, {
        status,
        url: shownUrl,
        retryable: status !== 501,
      });
    }
    throw new ExtractHttpStatusError(`${where} answered HTTP ${status}: ${snippet(raw)}`, { status, url: shownUrl, retryable: false });
  }
}

type RequestInit = Parameters<typeof request>[1] & { method: string; headers: Record<string, string>; body: string | undefined };

/**
 * `request`, following redirects itself one hop at a time (the dispatcher's own redirect interceptor is switched
 * off for it): `check` sees each hop before it is sent and may throw to refuse it. As undici and browsers do, a 301/302
 * after a POST and a 303 become a GET without a body, the `host` header is dropped, and `authorization`, `cookie`
 * and `proxy-authorization` are not sent to another origin. Past `maxRedirections`, the last answer is returned.
 */
async function requestFollowingRedirects(
  url: string,
  init: RequestInit,
  maxRedirections: number,
  check: (hop: RedirectHop) => void,
): Promise<Dispatcher.ResponseData<unknown>> {
  let current = new URL(url);
  let { method, headers, body } = init;
  for (let hop = 0; ; hop++) {
    // `maxRedirections: 0` switches off the pool's redirect interceptor for this request (its types omit the field)
    const response = await request(current, { ...init, method, headers, body, maxRedirections: 0 } as RequestInit);
    const location = headerValue(response.headers, 'location');
    if (!REDIRECT_STATUSES.has(response.statusCode) || location === undefined || hop >= maxRedirections) return response;
    let to: URL;
    try {
      to = new URL(location, current);
    } catch {
      return response; // a Location that is no URL: the 3xx is the answer
    }
    await response.body.dump();
    check({ from: current, to, status: response.statusCode });
    if (((response.statusCode === 301 || response.statusCode === 302) && method === 'POST') || (response.statusCode === 303 && method !== 'HEAD')) {
      method = 'GET';
      body = undefined;
      headers = Object.fromEntries(Object.entries(headers).filter(([name]) => !name.toLowerCase().startsWith('content-')));
    }
    const crossOrigin = to.origin !== current.origin;
    headers = Object.fromEntries(
      Object.entries(headers).filter(([name]) => {
        const lower = name.toLowerCase();
        return lower !== 'host' && !(crossOrigin && (lower === 'authorization' || lower === 'cookie' || lower === 'proxy-authorization'));
      }),
    );
    current = to;
  }
}

function decode(raw: Buffer, status: number, attempts: number, where: string, url: string, lenient = false): FetchPageResult {
  const hash = createHash('sha256').update(raw).digest('hex');
  let text = raw.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (lenient) {
    // an `ignoreErrors` status: JSON is data as usual, anything else becomes {"errorData": body} (reference)
    try {
      return { body: JSON.parse(text), bytes: raw.length, hash, status, attempts };
    } catch {
      return { body: { errorData: raw.toString('utf8') }, bytes: raw.length, hash, status, attempts };
    }
  }
  if (text.trim() === '') {
    throw new ExtractNotJsonError(`${where} answered HTTP ${status} with an empty body; expected JSON.`, { status, url });
  }
  try {
    return { body: JSON.parse(text), bytes: raw.length, hash, status, attempts };
  } catch (error) {
    throw new ExtractNotJsonError(`${where} answered HTTP ${status} with a body that is not JSON (${(error as Error).message}): ${snippet(raw)}`, {
      status,
      url,
      cause: error,
    });
  }
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * Sends a request whose `${env:NAME}` references (in the request and in the client config) are filled from
 * `secrets` right before sending; an error is scrubbed of the values. The descriptor and config keep the references.
 */
export async function fetchPageResolved(
  descriptor: RequestDescriptor,
  client: HttpClientConfig | undefined,
  secrets: SecretSource,
  options: FetchPageOptions = {},
): Promise<FetchPageResult> {
  const carried = [descriptor, client ?? null];
  assertSecretsBound(carried, descriptor.url, secrets);
  const { request: resolved, secrets: requestValues } = resolveRequestSecrets(descriptor, secrets);
  const resolvedClient = client ? resolveClientSecrets(client, secrets) : undefined;
  try {
    return await fetchPage(resolved, {
      ...options,
      client: resolvedClient?.client ?? options.client,
      checkRedirect: (hop) => {
        assertRedirectKeepsSecrets(carried, hop.from, hop.to, hop.status, secrets);
        options.checkRedirect?.(hop);
      },
    });
  } catch (err) {
    throw scrubError(err, [...requestValues, ...(resolvedClient?.secrets ?? [])]);
  }
}

/** Options of {@link createPageFetcher}. */
interface PageFetcherOptions extends FetchPageOptions {
  /** Fill `${env:NAME}` references from here before sending (see {@link fetchPageResolved}). Default: sent as they are. */
  secrets?: SecretSource;
}

/**
 * A `fetchPage` bound to options, in the shape `runExtraction` expects (it passes the configuration's
 * `api.client` as the second argument).
 */
export function createPageFetcher(options: PageFetcherOptions = {}): (descriptor: RequestDescriptor, client?: HttpClientConfig) => Promise<FetchPageResult> {
  const { secrets, ...fetchOptions } = options;
  return (descriptor, client) =>
    secrets
      ? fetchPageResolved(descriptor, client ?? options.client, secrets, fetchOptions)
      : fetchPage(descriptor, { ...fetchOptions, client: client ?? options.client });
}
