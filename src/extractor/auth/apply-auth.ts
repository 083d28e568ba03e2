/**
 * Authentication, applied by the activity to a request whose secrets are already filled, right before it is sent:
 * `query`, `basic`, `login`, `oauth20`, `oauth20.login`, with the reference's semantics. NOT workflow-safe (clock,
 * randomness, node:crypto through the function implementations).
 *
 * Nothing of it reaches workflow history: credentials come from `${env:NAME}` references filled here, and login
 * tokens live in a {@link LoginSessions} cache of the worker process, in the thread that sends the requests (the
 * page-loop thread: a restarted worker, or one whose page-loop thread stopped while idle, logs in again).
 *
 * - `query`: the `authentication.query` functions (contexts `query`, `request`, `attr`) are evaluated for every
 *   request and set in its query string (a param of the same name takes the new value).
 * - `basic`: `Authorization: Basic base64(user:password)` from the config's `#username`/`username` and
 *   `#password`/`password`.
 * - `login` / `oauth20.login`: the login request (`loginRequest`: endpoint against `baseUrl`, method, params and
 *   headers with functions; contexts `attr`, and `consumer`/`user` for OAuth) is sent before the first request and
 *   again once `expires` has passed; `apiRequest.query` / `.headers` (contexts `response`, `attr`; a plain string
 *   that is a path in the login response takes that value) are added to every request. Query params of the same
 *   name as the request's become `name[0]`, `name[1]` (the reference's merge); headers replace. `format: "text"`
 *   makes the whole body `data`; a JSON scalar is `data` too.
 * - `oauth20`: `authentication.query` / `.headers` functions with contexts `query`, `request` and `authorization`
 *   (`clientId`, `nonce`, `timestamp`, and `data` or `data.<path>` with `format: "json"`).
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { ExtractorConfigError } from '../errors';
import { DeferredCall, evaluateFunctions, flattenContext, phpString, type FunctionContext } from '../functions';
import { nodeCryptoFunctions } from '../http/node-functions';
import { getPath } from '../path';
import { phpStrtotime } from '../php-time';
import { toDescriptor } from '../request';
import type { AuthenticationConfig, JobMethod, JsonObject, RequestDescriptor } from '../types';
import { encodePairs, resolveEndpoint } from '../url';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What applying authentication needs. */
export interface AuthSetup {
  authentication: AuthenticationConfig;
  /** `parameters.config` without jobs (`attr`), secrets filled. */
  attributes: JsonObject;
  baseUrl: string;
}

/** Sends the login request (same retries/errors as pages); `text` gives the raw body. */
type LoginSender = (request: RequestDescriptor, format: 'json' | 'text') => Promise<{ body: unknown }>;

/** A logged-in session: what to add to requests, and until when (seconds; `null`: no expiry). */
interface LoginSession {
  query: Record<string, unknown>;
  headers: Record<string, unknown>;
  expiresAt: number | null;
}

/** Login sessions of a worker process, by a digest of the login configuration and its filled secrets. */
export class LoginSessions {
  private readonly sessions = new Map<string, LoginSession>();
  constructor(private readonly maxEntries = 100) {}
  get(key: string): LoginSession | undefined {
    return this.sessions.get(key);
  }
  set(key: string, session: LoginSession): void {
    this.sessions.delete(key);
    this.sessions.set(key, session);
    while (this.sessions.size > this.maxEntries) this.sessions.delete(this.sessions.keys().next().value as string);
  }
}

/** The login sessions of this thread (for activities: the page-loop thread's). */
const processLoginSessions = new LoginSessions();

/** Test seams and the login transport. */
export interface ApplyAuthOptions {
  sendLogin: LoginSender;
  sessions?: LoginSessions;
  /** Seconds since the epoch (default: the clock). */
  nowSeconds?: () => number;
  /** OAuth 2.0 nonce (default: 16 random hex characters). */
  nonce?: () => string;
}

/** The result: the request to send and the values to scrub from errors (tokens, computed credentials). */
interface AppliedAuth {
  request: RequestDescriptor;
  secrets: string[];
}

function parseQuery(url: string): Array<[string, string]> {
  const q = url.indexOf('?');
  if (q === -1) return [];
  const pairs: Array<[string, string]> = [];
  for (const part of url
    .slice(q + 1)
    .split('#')[0]!
    .split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const dec = (x: string) => {
      try {
        return decodeURIComponent(x.replace(/\+/g, ' '));
      } catch {
        return x;
      }
    };
    pairs.push([dec(eq === -1 ? part : part.slice(0, eq)), eq === -1 ? '' : dec(part.slice(eq + 1))]);
  }
  return pairs;
}

function withQuery(url: string, pairs: Array<[string, string]>): string {
  const base = url.split('#')[0]!.split('?')[0]!;
  return pairs.length === 0 ? base : `${base}?${encodePairs(pairs)}`;
}

/** Guzzle's `Query::parse` result as an object (a repeated key becomes a list). */
function queryObject(url: string): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const [k, v] of parseQuery(url)) {
    const prev = result[k];
    result[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return result;
}

/** The reference's `Utils::mergeQueries`: new keys appended, existing replaced, or with `toArray` both kept as `k[i]`. */
export function mergeQuery(url: string, add: Record<string, unknown>, toArray = false): string {
  const pairs = parseQuery(url);
  const arrays = new Map<string, string[]>();
  for (const [key, raw] of Object.entries(add)) {
    const value = phpString(raw);
    const index = pairs.findIndex(([k]) => k === key);
    if (index !== -1 && toArray) {
      arrays.set(key, [...(arrays.get(key) ?? [pairs[index]![1]]), value]);
      pairs.splice(index, 1);
    } else if (index !== -1) pairs[index] = [key, value];
    else pairs.push([key, value]);
  }
  for (const [key, values] of arrays) [...new Set(values)].forEach((v, i) => pairs.push([`${key}[${i}]`, v]));
  return withQuery(url, pairs);
}

function setHeaders(request: RequestDescriptor, headers: Record<string, unknown>, where: string): RequestDescriptor {
  const result = { ...request.headers };
  for (const [name, value] of Object.entries(headers)) {
    if (isObject(value) || Array.isArray(value)) {
      throw new ExtractorConfigError([{ path: `${where}.${name}`, message: `Invalid configuration: invalid type "object" in headers at path: ${name}` }]);
    }
    for (const k of Object.keys(result)) if (k.toLowerCase() === name.toLowerCase()) delete result[k];
    result[name] = phpString(value);
  }
  return { ...request, headers: result };
}

/** The reference's request context (`{"request": "method"}` …). */
function requestContext(request: RequestDescriptor): Record<string, unknown> {
  const url = new URL(request.url);
  const query = url.search.replace(/^\?/, '');
  return {
    url: request.url,
    path: url.pathname,
    queryString: query,
    method: request.method,
    hostname: url.hostname,
    port: url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : url.protocol === 'http:' ? 80 : null,
    resource: url.pathname + (query ? `?${query}` : ''),
  };
}

function evaluate(value: unknown, context: FunctionContext, nowSeconds: number, path: string): Record<string, unknown> {
  const result = evaluateFunctions(value ?? {}, context, { nowMs: nowSeconds * 1000, crypto: nodeCryptoFunctions, path });
  if (result instanceof DeferredCall) throw new Error(`${path}: a function could not be evaluated`);
  return isObject(result) ? result : {};
}

function parseData(text: unknown, path: string): unknown {
  try {
    return JSON.parse(phpString(text));
  } catch {
    throw new ExtractorConfigError([{ path, message: 'The OAuth data is not a valid JSON.' }]);
  }
}

/** Adds the configured authentication to `request` (secrets already filled). */
export async function applyAuthentication(request: RequestDescriptor, setup: AuthSetup, options: ApplyAuthOptions): Promise<AppliedAuth> {
  const { authentication: auth, attributes } = setup;
  const settings = auth.settings;
  const now = (options.nowSeconds ?? (() => Math.floor(Date.now() / 1000)))();
  const secrets: string[] = [];
  const base = 'parameters.api.authentication';
  switch (auth.type) {
    case 'query': {
      const query = evaluate(settings.query, { query: queryObject(request.url), request: requestContext(request), attr: attributes }, now, `${base}.query`);
      secrets.push(...Object.values(query).map(phpString));
      return { request: { ...request, url: mergeQuery(request.url, query) }, secrets };
    }
    case 'basic': {
      const user = phpString(attributes.username || attributes['#username']);
      const password = phpString(attributes.password || attributes['#password']);
      const value = `Basic ${nodeCryptoFunctions.base64Encode(`${user}:${password}`)}`;
      secrets.push(value, nodeCryptoFunctions.base64Encode(`${user}:${password}`));
      return { request: setHeaders(request, { Authorization: value }, base), secrets };
    }
    case 'oauth20': {
      const credentials = auth.oauth ?? {};
      const format = settings.format === 'json' ? 'json' : 'text';
      const authorization: Record<string, unknown> = {
        clientId: phpString(credentials.appKey),
        nonce: (options.nonce ?? (() => randomBytes(8).toString('hex')))(),
        timestamp: now,
      };
      if (format === 'json')
        Object.assign(authorization, flattenContext(parseData(credentials['#data'], 'authorization.oauth_api.credentials.#data'), 'data.'));
      else authorization.data = phpString(credentials['#data']);
      const context = { query: queryObject(request.url), request: requestContext(request), authorization };
      const query = evaluate(settings.query, context, now, `${base}.query`);
      const headers = evaluate(settings.headers, context, now, `${base}.headers`);
      secrets.push(...Object.values(query).map(phpString), ...Object.values(headers).map(phpString));
      return { request: setHeaders({ ...request, url: mergeQuery(request.url, query) }, headers, `${base}.headers`), secrets };
    }
    case 'oauth10': {
      const credentials = auth.oauth ?? {};
      const data = parseData(credentials['#data'], 'authorization.oauth_api.credentials.#data');
      if (!isObject(data))
        throw new ExtractorConfigError([{ path: 'authorization.oauth_api.credentials.#data', message: "Key 'oauth_api.credentials'.#data must be object." }]);
      for (const key of ['oauth_token', 'oauth_token_secret']) {
        if (data[key] === undefined)
          throw new ExtractorConfigError([
            { path: `authorization.oauth_api.credentials.#data.${key}`, message: `Missing 'oauth_api.credentials.#data.${key}' for OAuth 1.0 authorization.` },
          ]);
      }
      const header = oauth1Header(request, {
        consumerKey: phpString(credentials.appKey),
        consumerSecret: phpString(credentials['#appSecret']),
        token: phpString(data.oauth_token),
        tokenSecret: phpString(data.oauth_token_secret),
        timestamp: now,
        nonce: (options.nonce ?? (() => randomBytes(20).toString('hex')))(),
      });
      secrets.push(header);
      return { request: setHeaders(request, { Authorization: header }, base), secrets };
    }
    case 'login':
    case 'oauth20.login': {
      const sessions = options.sessions ?? processLoginSessions;
      const key = createHash('sha256')
        .update(JSON.stringify([setup.baseUrl, settings, attributes, auth.oauth]))
        .digest('hex');
      let session = sessions.get(key);
      if (!session || (session.expiresAt !== null && session.expiresAt !== 0 && now > session.expiresAt)) {
        session = await logIn(setup, options, now);
        sessions.set(key, session);
      }
      secrets.push(...Object.values(session.query).map(phpString), ...Object.values(session.headers).map(phpString));
      return { request: setHeaders({ ...request, url: mergeQuery(request.url, session.query, true) }, session.headers, `${base}.apiRequest.headers`), secrets };
    }
  }
}

async function logIn(setup: AuthSetup, options: ApplyAuthOptions, now: number): Promise<LoginSession> {
  const { authentication: auth, attributes } = setup;
  const settings = auth.settings;
  const base = 'parameters.api.authentication';
  const login = settings.loginRequest as JsonObject;
  const format = settings.format === 'text' ? 'text' : 'json';
  let context: FunctionContext = { attr: attributes };
  if (auth.type === 'oauth20.login') {
    const credentials = auth.oauth ?? {};
    const user = parseData(credentials['#data'], 'authorization.oauth_api.credentials.#data');
    context = {
      consumer: { client_id: phpString(credentials.appKey), client_secret: phpString(credentials['#appSecret']) },
      user: isObject(user) ? user : {},
      attr: attributes,
    };
  }
  const params = evaluate(login.params, context, now, `${base}.loginRequest.params`);
  const headers = evaluate(login.headers, context, now, `${base}.loginRequest.headers`);
  const method = (typeof login.method === 'string' ? login.method.toUpperCase() : 'GET') as JobMethod;
  const descriptor = toDescriptor({
    url: resolveEndpoint(setup.baseUrl, login.endpoint as string),
    method,
    params,
    headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, phpString(v)])),
  });
  const { body } = await options.sendLogin(descriptor, format);
  let response: Record<string, unknown>;
  if (format === 'text') response = { data: body };
  else if (isObject(body)) response = body;
  else if (body === null || Array.isArray(body)) {
    throw new ExtractorConfigError([
      {
        path: `${base}.loginRequest`,
        message: `The response to the login request should be an object or a scalar value, given "${body === null ? 'NULL' : 'array'}".`,
      },
    ]);
  } else response = { data: body };

  const api = (settings.apiRequest as JsonObject | undefined) ?? {};
  const responseContext = { response, attr: attributes };
  const fromResponse = (value: unknown, path: string) => {
    const built = evaluate(value, responseContext, now, path);
    for (const [k, v] of Object.entries(built)) {
      if (typeof v !== 'string') continue;
      const found = getPath(response, v);
      if (found.found) built[k] = found.value;
    }
    return built;
  };
  return {
    query: fromResponse(api.query, `${base}.apiRequest.query`),
    headers: fromResponse(api.headers, `${base}.apiRequest.headers`),
    expiresAt: expiration(settings.expires, response, now),
  };
}

/** The reference's expiry: seconds from now, or a response value (timestamp, date string, or seconds if `relative`). */
function expiration(expires: unknown, response: unknown, now: number): number | null {
  if (expires === undefined || expires === null) return null;
  if (typeof expires === 'number' || (typeof expires === 'string' && expires.trim() !== '' && !Number.isNaN(Number(expires))))
    return now + Math.trunc(Number(expires));
  if (!isObject(expires)) return null;
  const found = getPath(response, phpString(expires.response));
  if (!found.found || found.value === null || found.value === undefined) return null;
  const raw = found.value;
  let at = typeof raw === 'number' && Number.isInteger(raw) ? raw : phpStrtotime(phpString(raw), now);
  if (at === false) at = 0;
  if (expires.relative) at += now;
  if (at < now) {
    throw new ExtractorConfigError([
      { path: 'parameters.api.authentication.expires', message: `Login authentication returned expiry time before current time: '${phpString(raw)}'` },
    ]);
  }
  return at;
}

/** What an OAuth 1.0 signature needs. */
interface OAuth1Keys {
  consumerKey: string;
  consumerSecret: string;
  token: string;
  tokenSecret: string;
  timestamp: number;
  nonce: string;
}

const rfc3986 = (v: string) => encodeURIComponent(v).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * The `Authorization: OAuth …` header (HMAC-SHA1, RFC 5849) as the reference's Guzzle subscriber builds it: the
 * base string has the method, the URL without query (default port left out) and the sorted oauth, query and form
 * params; the header lists the oauth params sorted, values percent-encoded.
 */
function oauth1Header(request: RequestDescriptor, keys: OAuth1Keys): string {
  const oauth: Record<string, string> = {
    oauth_consumer_key: keys.consumerKey,
    oauth_nonce: keys.nonce,
    oauth_signature_method: 'HMAC-SHA1',
    oauth_timestamp: String(keys.timestamp),
    oauth_token: keys.token,
    oauth_version: '1.0',
  };
  const url = new URL(request.url);
  const params: Array<[string, string]> = [...Object.entries(oauth), ...parseQuery(request.url)];
  if (request.body?.kind === 'form') params.push(...parseQuery(`?${request.body.value}`));
  params.sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0));
  const baseUri = `${url.protocol}//${url.host}${url.pathname}`;
  const paramString = params.map(([k, v]) => `${rfc3986(k)}=${rfc3986(v)}`).join('&');
  const base = `${request.method.toUpperCase()}&${rfc3986(baseUri)}&${rfc3986(paramString)}`;
  const signature = createHmac('sha1', `${rfc3986(keys.consumerSecret)}&${rfc3986(keys.tokenSecret)}`)
    .update(base)
    .digest('base64');
  const all: Record<string, string> = { ...oauth, oauth_signature: signature };
  return `OAuth ${Object.keys(all)
    .sort()
    .map((k) => `${k}="${rfc3986(all[k]!)}"`)
    .join(', ')}`;
}
