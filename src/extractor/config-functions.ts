/**
 * User functions in the configuration: headers whose value is a function, the `attr` context, a
 * function `baseUrl` (evaluated once, at validation), and the static checks of every place that takes functions.
 *
 * NOT workflow-safe: used by config-schema.ts.
 */
import { isObject, type Raw } from './config-values';
import { ExtractorConfigError, type ConfigIssue } from './errors';
import { DeferredCall, evaluateFunctions, flattenContext, functionIssues, isFunctionCall } from './functions';
import { nodeCryptoFunctions } from './http/node-functions';
import type { ExtractorConfig, JobConfig, JsonObject } from './types';
import { isHttpUrl } from './url';

/** Headers whose value is a function object, later sources winning (a plain value later removes a function). */
export function functionHeadersOf(...sources: unknown[]): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const source of sources) {
    for (const [k, v] of Object.entries((source as Raw | undefined) ?? {})) {
      if (isObject(v)) result[k] = v;
      else delete result[k];
    }
  }
  return result;
}

/** `parameters.config` without `jobs`: the `attr` context. */
export function attributesOf(configRaw: Raw): JsonObject {
  const { jobs: _jobs, ...attributes } = configRaw;
  return attributes;
}

/** A function `baseUrl` evaluated with the `attr` context (as the reference, once); issues when it cannot be. */
export function evaluateBaseUrl(raw: unknown, attributes: JsonObject, issues: ConfigIssue[]): string {
  if (typeof raw === 'string') return raw;
  const path = 'parameters.api.baseUrl';
  try {
    // evaluated once, when the configuration is validated (the activity's result is what history keeps)
    const value = evaluateFunctions(raw, { attr: attributes }, { nowMs: Date.now(), crypto: nodeCryptoFunctions, path });
    if (value instanceof DeferredCall || (typeof value === 'string' && /\$\{env:/.test(value))) {
      issues.push({ path, message: 'The "baseUrl" function uses a secret (${env:…}); a base URL cannot hold secrets (it is shown in progress and history).' });
      return 'http://invalid.invalid/';
    }
    if (typeof value !== 'string' || !isHttpUrl(value)) {
      issues.push({ path, message: `The "baseUrl" attribute in API configuration resulted in an invalid URL (${JSON.stringify(value)})` });
      return 'http://invalid.invalid/';
    }
    return value;
  } catch (err) {
    if (err instanceof ExtractorConfigError) issues.push(...err.issues);
    else throw err;
    return 'http://invalid.invalid/';
  }
}

/**
 * Static checks of every place that takes functions (names, args, `attr`/`time` references), before any request:
 * job and scroll params, placeholders, headers, authentication.
 */
export function functionPlacementIssues(config: ExtractorConfig, issues: ConfigIssue[]): void {
  const attr = flattenContext(config.config.attributes ?? {});
  const time = { previousStart: 0, currentStart: 0 };
  const visit = (job: JobConfig, path: string) => {
    issues.push(...functionIssues(job.params, `${path}.params`, { attr, time }));
    for (const [name, fn] of Object.entries(job.placeholderFunctions ?? {})) {
      issues.push(...functionIssues(fn, `${path}.placeholders.${name}`, { placeholder: { value: '' } }, ['urlencode']));
    }
    job.children.forEach((child, i) => visit(child, `${path}.children[${i}]`));
  };
  config.config.jobs.forEach((job, i) => visit(job, `parameters.config.jobs[${i}]`));
  issues.push(...functionIssues(config.api.http.defaultParams, 'parameters.api.http.defaultOptions.params', { attr, time }));
  issues.push(...functionIssues(config.api.http.functionHeaders ?? {}, 'parameters.api.http.headers', { attr }));
  for (const [name, value] of Object.entries(config.api.http.functionHeaders ?? {})) {
    const isReference = isObject(value) && Object.keys(value).length === 1 && 'attr' in value;
    if (!isFunctionCall(value) && !isReference) {
      issues.push({
        path: `parameters.api.http.headers.${name}`,
        message: `Invalid configuration: invalid type "object" in headers at path: ${name} (a header is a string, a number, a function or an {"attr": …} reference)`,
      });
    }
  }
  const pagination = config.api.pagination;
  const scrollers = pagination.method === 'multiple' ? Object.entries(pagination.scrollers) : [['', pagination] as const];
  for (const [name, scroller] of scrollers) {
    if (scroller.method === 'response.param' && scroller.scrollRequest?.params) {
      issues.push(
        ...functionIssues(scroller.scrollRequest.params, `parameters.api.pagination${name ? `.scrollers.${name}` : ''}.scrollRequest.params`, { attr, time }),
      );
    }
  }
  const auth = config.api.authentication;
  if (auth) {
    const base = 'parameters.api.authentication';
    const s = auth.settings;
    const login = isObject(s.loginRequest) ? s.loginRequest : {};
    const api = isObject(s.apiRequest) ? s.apiRequest : {};
    const loginContexts: Record<string, Record<string, unknown> | null> = auth.type === 'oauth20.login' ? { attr, consumer: null, user: null } : { attr };
    if (auth.type === 'query') issues.push(...functionIssues(s.query, `${base}.query`, { attr, query: null, request: null }));
    if (auth.type === 'oauth20') {
      issues.push(...functionIssues(s.query ?? {}, `${base}.query`, { query: null, request: null, authorization: null }));
      issues.push(...functionIssues(s.headers ?? {}, `${base}.headers`, { query: null, request: null, authorization: null }));
    }
    if (auth.type === 'login' || auth.type === 'oauth20.login') {
      issues.push(...functionIssues(login.params ?? {}, `${base}.loginRequest.params`, loginContexts));
      issues.push(...functionIssues(login.headers ?? {}, `${base}.loginRequest.headers`, loginContexts));
      issues.push(...functionIssues(api.query ?? {}, `${base}.apiRequest.query`, { attr, response: null }));
      issues.push(...functionIssues(api.headers ?? {}, `${base}.apiRequest.headers`, { attr, response: null }));
    }
  }
}
