/**
 * Every key of a Generic-Extractor configuration this extractor reads, place by place. A key it does not know would
 * be ignored, and an extraction that ignores part of its configuration "succeeds" with other tables or sends other
 * requests than the user meant (an unsupported authentication key: unauthenticated requests). So an unknown key is
 * a configuration error naming it. Free-form places (params, headers, placeholders, user data, config attributes
 * that functions read, iteration values, mappings — checked by their own validation) are not walked.
 *
 * NOT workflow-safe (uses the zod shapes of the pagination methods): config time only.
 */
import type { ConfigIssue } from './errors';
import { cursorShape, offsetShape, pageNumberShape, responseUrlShape, zendeskResponseUrlShape } from './pagination-schema';

/** A place: the keys it may hold, each mapped to how its value is checked (`null`: not walked). */
type Place = { [key: string]: Place | ((value: unknown, path: string[], issues: ConfigIssue[]) => void) | null };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const STOP_CONDITIONS: Place = {
  forceStop: { pages: null, time: null, volume: null },
  nextPageFlag: { field: null, stopOn: null, ifNotSet: null },
  limitStop: { count: null, field: null },
};

const keysOf = (shape: object): Place => Object.fromEntries(Object.keys(shape).map((k) => [k, null]));

/** The keys of each pagination method (from the same shapes its schema validates), besides `method`. */
const PAGINATION: Record<string, Place> = {
  'response.param': { responseParam: null, queryParam: null, includeParams: null, scrollRequest: { endpoint: null, method: null, params: null } },
  offset: keysOf(offsetShape),
  pagenum: keysOf(pageNumberShape),
  'response.url': keysOf(responseUrlShape),
  'zendesk.response.url': keysOf(zendeskResponseUrlShape),
  cursor: keysOf(cursorShape),
};

function checkScroller(value: unknown, path: string[], issues: ConfigIssue[], allowMultiple: boolean): void {
  if (!isObject(value)) return;
  const method = typeof value.method === 'string' ? value.method : '';
  if (method === 'multiple' && allowMultiple) {
    checkPlace(value, { method: null, default: null, ...STOP_CONDITIONS, scrollers: checkScrollers }, path, issues);
    return;
  }
  const own = PAGINATION[method];
  // an unknown method is the schema's error ("Unknown pagination method"); no key list to hold it to
  if (own === undefined && method !== '') return;
  checkPlace(value, { method: null, ...STOP_CONDITIONS, ...(own ?? {}) }, path, issues);
}

const checkScrollers = (value: unknown, path: string[], issues: ConfigIssue[]) => {
  if (!isObject(value)) return;
  for (const [name, scroller] of Object.entries(value)) checkScroller(scroller, [...path, name], issues, false);
};

const REQUEST_PARTS: Place = { endpoint: null, method: null, params: null, headers: null };

const AUTHENTICATION: Place = {
  type: null,
  format: null,
  query: null,
  headers: null,
  loginRequest: REQUEST_PARTS,
  apiRequest: { headers: null, query: null },
  expires: (value, path, issues) => (isObject(value) ? checkPlace(value, { response: null, relative: null }, path, issues) : undefined),
};

const checkJobs = (value: unknown, path: string[], issues: ConfigIssue[]) => {
  if (!Array.isArray(value)) return;
  value.forEach((job, i) => checkPlace(job, JOB, [...path, `[${i}]`], issues));
};

const JOB: Place = {
  endpoint: null,
  method: null,
  params: null,
  dataType: null,
  dataField: (value, path, issues) => (isObject(value) ? checkPlace(value, { path: null, delimiter: null }, path, issues) : undefined),
  placeholders: null,
  recursionFilter: null,
  responseFilter: null,
  responseFilterDelimiter: null,
  scroller: null,
  userData: null,
  children: checkJobs,
};

const ROOT: Place = {
  parameters: {
    api: {
      baseUrl: null,
      pagination: (value, path, issues) => checkScroller(value, path, issues, true),
      http: {
        headers: null,
        defaultOptions: { params: null, headers: null },
        requiredHeaders: null,
        ignoreErrors: null,
        connectTimeout: null,
        requestTimeout: null,
      },
      authentication: AUTHENTICATION,
      retryConfig: null,
      caCertificate: null,
      '#clientCertificate': null,
    },
    // besides these, `config` holds the user's attributes (`{"attr": "…"}` in functions): not walked
    config: (value, path, issues) => {
      if (!isObject(value)) return;
      checkJobs(value.jobs, [...path, 'jobs'], issues);
      if (isObject(value.http)) checkPlace(value.http, { headers: null }, [...path, 'http'], issues);
    },
    iterations: null,
    aws: { signature: { credentials: { accessKeyId: null, '#secretKey': null, serviceName: null, regionName: null } } },
    sshProxy: null,
  },
  authorization: { oauth_api: { credentials: null } },
};

/** `parameters.config.jobs[0].endpoint` (the path form of the other configuration errors). */
const dotted = (path: string[]) => path.map((p, i) => (i === 0 || p.startsWith('[') ? p : `.${p}`)).join('');

function checkPlace(value: unknown, place: Place, path: string[], issues: ConfigIssue[]): void {
  if (!isObject(value)) return; // wrong types are the schema's to report
  for (const [key, inner] of Object.entries(value)) {
    const rule = place[key];
    const at = [...path, key];
    if (rule === undefined) {
      issues.push({
        path: dotted(at),
        message: `'${key}' is not a key this extractor knows${path.length ? ` in '${dotted(path)}'` : ''}, so it would be ignored: remove it, or check its spelling (known there: ${Object.keys(place).join(', ')})`,
      });
    } else if (typeof rule === 'function') {
      rule(inner, at, issues);
    } else if (rule !== null) {
      checkPlace(inner, rule, at, issues);
    }
  }
}

/** Issues for every key of `json` (a configuration as written) this extractor does not read. */
export function unknownKeyIssues(json: unknown): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  checkPlace(json, ROOT, [], issues);
  return issues;
}
