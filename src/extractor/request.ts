/**
 * Builds request descriptors from a job and the scroller settings. Pure module.
 *
 * Rules (spec/response-param.md): the first request is the job's endpoint, method and params; a scroll request
 * starts from the job config, drops the params unless `includeParams`, lays `scrollRequest` over it recursively,
 * then sets `<queryParam> = <value>` last. `api.http.defaultOptions.params` go under every request's params.
 * GET sends params in the query string, POST as a JSON body, FORM as an urlencoded body.
 */
import type {
  ApiConfig,
  DeferredValue,
  JobConfig,
  JobMethod,
  JsonObject,
  PaginationConfig,
  RequestDescriptor,
  ResponseParamScrollerConfig,
  ScrollerConfig,
} from './types';
import { encodePairs, resolveEndpoint, setQueryParams, toQueryPairs } from './url';
import { ExtractorConfigError } from './errors';
import { DeferredCall, evaluateFunctions, timeContext, tokenizeDeferred, type FunctionScope } from './functions';

/** Where and when request building evaluates user functions: the scope (attributes, run times) and "now" (ms). */
export interface RequestFunctions {
  scope: FunctionScope;
  /** Workflow time of the job run's start: `time()`, `date(format)` and relative `strtotime` use it. */
  nowMs: number;
  /** Path of the job in the configuration, for error messages. */
  path?: string;
}

/**
 * Evaluates the user functions of a spec's params (contexts `attr`, `time`) and function headers (context `attr`,
 * as the reference, which builds headers once per run); calls that must wait for the activity become `${fn:N}`
 * tokens listed in `deferred`.
 */
function withFunctions(spec: RequestSpec, api: ApiConfig, fn: RequestFunctions | undefined): RequestSpec {
  const functionHeaders = api.http.functionHeaders ?? {};
  if (!fn && Object.keys(functionHeaders).length === 0) return spec;
  const scope: FunctionScope = fn?.scope ?? { attributes: {}, runTimes: null };
  const nowMs = fn?.nowMs ?? 0;
  const where = fn?.path ?? 'parameters.config.jobs';
  const deferred: DeferredValue[] = [];
  const params = evaluateFunctions(spec.params, { attr: scope.attributes, time: timeContext(scope, nowMs) }, { nowMs, path: `${where}.params` });
  const headers = { ...spec.headers };
  for (const [name, value] of Object.entries(functionHeaders)) {
    const evaluated = evaluateFunctions(value, { attr: scope.attributes }, { nowMs, path: `parameters.api.http.headers.${name}` });
    if (typeof evaluated === 'object' && evaluated !== null && !(evaluated instanceof DeferredCall)) {
      throw new ExtractorConfigError([
        { path: `parameters.api.http.headers.${name}`, message: `Invalid configuration: invalid type "object" in headers at path: ${name}` },
      ]);
    }
    headers[name] = String(tokenizeDeferred(evaluated, deferred, nowMs) ?? '');
  }
  return {
    ...spec,
    params: tokenizeDeferred(params, deferred, nowMs) as JsonObject,
    headers,
    ...(deferred.length > 0 ? { deferred } : {}),
  };
}

/** What a request is made of before it becomes a descriptor. */
export interface RequestSpec {
  /** Absolute URL (endpoint resolved against `baseUrl`, with its own query string). */
  url: string;
  method: JobMethod;
  /** Params including `api.http.defaultOptions.params` (defaults first, the job's values win). */
  params: JsonObject;
  headers: Record<string, string>;
  /** Deferred user-function calls (`${fn:N}` tokens in params and headers), see `./functions`. */
  deferred?: DeferredValue[];
}

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * PHP's `array_replace_recursive`: keys of `over` replace those of `base` (keeping `base`'s key order); where both
 * sides hold objects or arrays, they merge recursively (arrays by index).
 */
function replaceRecursive(base: unknown, over: unknown): unknown {
  const baseIsContainer = isObject(base) || Array.isArray(base);
  const overIsContainer = isObject(over) || Array.isArray(over);
  if (!baseIsContainer || !overIsContainer) return over;
  if (Array.isArray(base) && Array.isArray(over)) {
    const result: unknown[] = [...base];
    over.forEach((v, i) => {
      result[i] = i < base.length ? replaceRecursive(base[i], v) : v;
    });
    return result;
  }
  const result: JsonObject = { ...(base as JsonObject) };
  for (const [key, value] of Object.entries(over as JsonObject)) {
    result[key] = key in result ? replaceRecursive(result[key], value) : value;
  }
  return result;
}

/**
 * The scroller that applies to a job: the pagination itself, or with `method: "multiple"` the job's `scroller`,
 * else `pagination.default`, else the one named `default`, else none.
 */
export function scrollerForJob(pagination: PaginationConfig, job: Pick<JobConfig, 'scroller'>): ScrollerConfig {
  if (pagination.method !== 'multiple') return pagination;
  const name = job.scroller ?? pagination.default ?? ('default' in pagination.scrollers ? 'default' : null);
  if (name === null) return { method: 'none', forceStop: null, nextPageFlag: null, limitStop: null };
  const scroller = pagination.scrollers[name];
  if (!scroller) {
    // parseExtractorConfig rejects this earlier; kept for configs built by hand.
    throw new Error(`Scroller '${name}' not set in API definitions. Scrollers defined: ${Object.keys(pagination.scrollers).join(', ')}`);
  }
  return scroller;
}

/** The first request of a job: its endpoint, method and params (never `scrollRequest`). */
export function firstRequestSpec(api: ApiConfig, job: Pick<JobConfig, 'endpoint' | 'method' | 'params'>, fn?: RequestFunctions): RequestSpec {
  return endpointSpec(api, job, fn);
}

/** A request to `endpoint` (resolved against `baseUrl`) with `params` over the default params and the API's headers. */
function endpointSpec(api: ApiConfig, request: { endpoint: string; method: JobMethod; params: JsonObject }, fn: RequestFunctions | undefined): RequestSpec {
  return withFunctions(
    {
      url: resolveEndpoint(api.baseUrl, request.endpoint),
      method: request.method,
      params: replaceRecursive(api.http.defaultParams, request.params) as JsonObject,
      headers: { ...api.http.headers },
    },
    api,
    fn,
  );
}

/**
 * The template of every scroll request of a job (without the scroll value): job config, params dropped unless
 * `includeParams`, `scrollRequest` laid over, defaults under.
 */
export function scrollTemplateSpec(
  api: ApiConfig,
  job: Pick<JobConfig, 'endpoint' | 'method' | 'params'>,
  scroller: ResponseParamScrollerConfig,
  fn?: RequestFunctions,
): RequestSpec {
  let base: { endpoint: string; method: JobMethod; params: JsonObject } = {
    endpoint: job.endpoint,
    method: job.method,
    params: scroller.includeParams ? job.params : {},
  };
  if (scroller.scrollRequest) base = replaceRecursive(base, scroller.scrollRequest) as typeof base;
  return endpointSpec(api, base, fn);
}

/** Sets `<name> = <value>` in params (replacing in place a param of that name, else appending). */
export function withParam(params: JsonObject, name: string, value: unknown): JsonObject {
  return { ...params, [name]: value };
}

function withContentType(headers: Record<string, string>, type: string): Record<string, string> {
  const result = Object.fromEntries(Object.entries(headers).filter(([k]) => k.toLowerCase() !== 'content-type'));
  return { ...result, 'Content-Type': type };
}

/** Turns a spec into the JSON descriptor the fetcher sends. */
export function toDescriptor(spec: RequestSpec): RequestDescriptor {
  const descriptor = baseDescriptor(spec);
  return spec.deferred && spec.deferred.length > 0 ? { ...descriptor, deferred: spec.deferred } : descriptor;
}

function baseDescriptor(spec: RequestSpec): RequestDescriptor {
  switch (spec.method) {
    case 'GET':
      return { method: 'GET', url: setQueryParams(spec.url, toQueryPairs(spec.params)), headers: { ...spec.headers } };
    case 'POST':
      return {
        method: 'POST',
        url: setQueryParams(spec.url, []),
        headers: withContentType(spec.headers, 'application/json'),
        // empty params are `[]`, as the reference's PHP encodes an empty array
        body: { kind: 'json', value: Object.keys(spec.params).length === 0 ? [] : spec.params },
      };
    case 'FORM':
      return {
        method: 'POST',
        url: setQueryParams(spec.url, []),
        headers: withContentType(spec.headers, 'application/x-www-form-urlencoded'),
        body: { kind: 'form', value: encodePairs(toQueryPairs(spec.params)) },
      };
  }
}
