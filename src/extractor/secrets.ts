/**
 * Extractor secrets: references to the worker's environment, resolved only inside the page-fetching activity, and
 * the check that no secret is given in clear. Pure module (the environment is passed in).
 *
 * A reference is `${env:NAME}` inside any string of the configuration (a header value, a query or body param, the
 * endpoint): `"Authorization": "Bearer ${env:SAPI_SECRET_API_TOKEN}"`, `"#apiKey": "${env:SAPI_SECRET_API_KEY}"`.
 * The configuration, the scroller state (`state.next`), activity inputs and results, heartbeats and the `progress`
 * query all carry the reference; {@link resolveRequestSecrets} fills a copy of the request just before it is sent.
 * Only variables whose name starts with the worker's prefix (`SAPI_EXTRACT_SECRET_ENV_PREFIX`, default
 * {@link DEFAULT_SECRET_ENV_PREFIX}) can be referenced, so a configuration cannot read the Storage token or any
 * other variable of the worker.
 */
import { ExtractorConfigError, type ConfigIssue } from './errors';
import type { RequestDescriptor } from './types';
import { encodeQueryComponent } from './url';

/** Default prefix of the environment variables a configuration may reference. */
export const DEFAULT_SECRET_ENV_PREFIX = 'SAPI_SECRET_';

/** `${env:NAME}` as written, or percent-encoded in a URL or form body (`%24%7Benv%3ANAME%7D`, `$%7Benv:NAME%7D`). */
const REFERENCE = /(?:\$|%24)(?:\{|%7B)env(?::|%3A)([A-Za-z_][A-Za-z0-9_]*)(?:\}|%7D)/gi;
const RAW_REFERENCE = /\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g;
const ANY_REFERENCE = new RegExp(RAW_REFERENCE.source);

/** Header names that carry credentials: their values must be references. */
const SECRET_HEADER = /authorization|cookie|api[-_]?key|key|token|secret|password|passwd|credential|signature|session/i;
/** Param names that carry credentials (narrower than headers: `sort_key` or `keyword` are not secrets). */
const SECRET_PARAM = /api[-_]?key|access[-_]?key|private[-_]?key|token|secret|password|passwd|credential|signature/i;

/** Where the worker's secrets come from. */
export interface SecretSource {
  /** The worker's environment (`process.env`). */
  env: Record<string, string | undefined>;
  /** Only variables starting with this can be referenced. Default {@link DEFAULT_SECRET_ENV_PREFIX}. */
  prefix?: string;
  /** Each secret goes only to the hosts of its `<NAME>_HOSTS` variable (`secret-hosts.ts`). The plugin's activities set it. */
  bindHosts?: boolean;
}

/** The `${env:NAME}` reference to a variable (what to write in a configuration). */
export function envReference(name: string): string {
  return `\${env:${name}}`;
}

/** True when the string holds at least one `${env:NAME}` reference. */
export function hasReference(value: string): boolean {
  // not RAW_REFERENCE: `test` on a global pattern leaves its lastIndex after the match, and `matchAll` starts there
  return ANY_REFERENCE.test(value);
}

/** Names `pattern` finds anywhere in a JSON value (strings and keys), in order of appearance, without repeats. */
function namesMatching(json: unknown, pattern: RegExp): string[] {
  const names = new Set<string>();
  const visit = (value: unknown) => {
    if (typeof value === 'string') for (const m of value.matchAll(pattern)) names.add(m[1]!);
    else if (Array.isArray(value)) value.forEach(visit);
    else if (typeof value === 'object' && value !== null) {
      for (const [k, v] of Object.entries(value)) {
        visit(k);
        visit(v);
      }
    }
  };
  visit(json);
  return [...names];
}

/** Names referenced anywhere in a JSON value (strings only), in order of appearance, without repeats. */
export function referencedNames(json: unknown): string[] {
  return namesMatching(json, RAW_REFERENCE);
}

/**
 * Names referenced anywhere in a JSON value as written or percent-encoded (a request's URL and form body carry
 * `%24%7Benv%3ANAME%7D`): what a request will carry once filled. The host binding checks these.
 */
export function carriedNames(json: unknown): string[] {
  return namesMatching(json, REFERENCE);
}

/** Problems with the references of a configuration on this worker: names outside the prefix, variables not set. */
export function referenceIssues(json: unknown, source: SecretSource): ConfigIssue[] {
  const prefix = source.prefix ?? DEFAULT_SECRET_ENV_PREFIX;
  const issues: ConfigIssue[] = [];
  for (const name of referencedNames(json)) {
    if (!name.startsWith(prefix)) {
      issues.push({
        path: envReference(name),
        message: `the worker only resolves references to variables starting with ${prefix} (SAPI_EXTRACT_SECRET_ENV_PREFIX); got ${name}: set the secret as ${prefix}… on the worker and reference that`,
      });
    } else if (!source.env[name]) {
      issues.push({ path: envReference(name), message: `${name} is not set in the worker's environment: set it on every worker (and restart them)` });
    }
  }
  return issues;
}

/** Fails with `SAPI_EXTRACT_CONFIG_INVALID` (non-retryable) when a reference cannot be resolved on this worker. */
export function assertReferencesResolvable(json: unknown, source: SecretSource): void {
  const issues = referenceIssues(json, source);
  if (issues.length > 0) throw new ExtractorConfigError(issues);
}

/**
 * Where a configuration holds a secret in clear (paths only, never values): a value under a `#` key (Keboola's
 * convention for encrypted values), a header named like a credential (`Authorization`, `X-Api-Key`, `*token*`,
 * `*secret*`, `*key*`, …) or a param named like one (`api_key`, `access_token`, …), whose value is not empty and holds
 * no `${env:NAME}` reference.
 */
export function findClearSecrets(json: unknown): string[] {
  const found: string[] = [];
  const isClear = (value: unknown) =>
    typeof value === 'string' ? value !== '' && !hasReference(value) : typeof value === 'number' || typeof value === 'boolean';
  const visit = (value: unknown, path: string, within: 'headers' | 'params' | null, secret: boolean) => {
    // user functions: a call or context reference under a credential name is fine when it draws on a
    // secret (a reference, a `#` attribute, OAuth credentials, the login response); literal args alone are clear
    if (secret && isCallOrReference(value)) {
      if (!drawsOnSecret(value, (attr) => valueAtAttr(json, attr))) {
        // the clear values it is computed from are what must move to the environment: its attributes, else itself
        const attributes = attributePaths(value).filter((attr) => isClear(valueAtAttr(json, attr)));
        found.push(...(attributes.length > 0 ? attributes.map((attr) => `parameters.config.${attr}`) : [path]));
      }
      return;
    }
    if (Array.isArray(value)) {
      value.forEach((v, i) => visit(v, `${path}[${i}]`, within, secret));
      return;
    }
    if (typeof value === 'object' && value !== null) {
      for (const [key, v] of Object.entries(value)) {
        // login `apiRequest` values are paths into (or functions of) the login response, never credentials themselves
        if (key === 'apiRequest') continue;
        const named = key.startsWith('#') || (within === 'headers' && SECRET_HEADER.test(key)) || (within === 'params' && SECRET_PARAM.test(key));
        const inside = key === 'headers' ? 'headers' : key === 'params' ? 'params' : within;
        visit(v, path === '' ? key : `${path}.${key}`, inside, secret || named);
      }
      return;
    }
    if (secret && isClear(value)) found.push(path);
  };
  visit(json, '', null, false);
  return found;
}

const SECRET_CONTEXTS = ['authorization', 'user', 'consumer', 'response'];
const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function isCallOrReference(value: unknown): boolean {
  if (!isPlainObject(value)) return false;
  const keys = Object.keys(value);
  return 'function' in value || (keys.length === 1 && ['attr', ...SECRET_CONTEXTS].includes(keys[0]!));
}

/** The `attr` paths a call or reference reads. */
function attributePaths(value: unknown, into: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((v) => attributePaths(v, into));
  else if (isPlainObject(value)) {
    const keys = Object.keys(value);
    if (keys.length === 1 && keys[0] === 'attr' && typeof value.attr === 'string') into.push(value.attr);
    else Object.values(value).forEach((v) => attributePaths(v, into));
  }
  return into;
}

/** The value of `parameters.config.<attr>` in a configuration (dot path). */
function valueAtAttr(json: unknown, attr: string): unknown {
  let node: unknown = isPlainObject(json) && isPlainObject(json.parameters) ? json.parameters.config : undefined;
  for (const step of attr.split('.')) node = isPlainObject(node) ? node[step] : Array.isArray(node) ? node[Number(step)] : undefined;
  return node;
}

/** Whether a call or reference reads a secret: a reference, a `#` or referenced attribute, a credentials context. */
function drawsOnSecret(value: unknown, attribute: (path: string) => unknown): boolean {
  if (typeof value === 'string') return hasReference(value);
  if (Array.isArray(value)) return value.some((v) => drawsOnSecret(v, attribute));
  if (!isPlainObject(value)) return false;
  const keys = Object.keys(value);
  if (keys.length === 1 && SECRET_CONTEXTS.includes(keys[0]!)) return true;
  if (keys.length === 1 && keys[0] === 'attr') {
    if (typeof value.attr !== 'string') return false;
    const target = attribute(value.attr);
    return value.attr.split('.').some((part) => part.startsWith('#')) || (typeof target === 'string' && hasReference(target));
  }
  return Object.entries(value).some(([k, v]) => k !== 'function' && drawsOnSecret(v, attribute));
}

/** The error for secrets given in clear: where they are and how to give them instead. Never shows a value. */
export function clearSecretsError(paths: readonly string[], prefix = DEFAULT_SECRET_ENV_PREFIX): ExtractorConfigError {
  return new ExtractorConfigError(
    paths.map((path) => ({
      path,
      message: `a secret given in clear would be stored in the workflow history; put it in the worker's environment as ${prefix}NAME and write "${envReference(`${prefix}NAME`)}" here instead`,
    })),
  );
}

function valueOf(name: string, source: SecretSource): string {
  const issues = referenceIssues(envReference(name), source);
  if (issues.length > 0) throw new ExtractorConfigError(issues);
  return source.env[name]!;
}

/**
 * A copy of the request with every `${env:NAME}` filled from the worker's environment (percent-encoded in the URL
 * and a form body), and the values it filled (to scrub them from error messages). The original is left as it is:
 * it is what the scroller state, heartbeats and results keep. Fails with `SAPI_EXTRACT_CONFIG_INVALID` (non-retryable)
 * naming the variable when a reference is outside the prefix or not set.
 */
export function resolveRequestSecrets(request: RequestDescriptor, source: SecretSource): { request: RequestDescriptor; secrets: string[] } {
  const secrets = new Set<string>();
  const fill = (text: string, pattern: RegExp, encode: boolean) =>
    text.replace(pattern, (_m, name: string) => {
      const value = valueOf(name, source);
      secrets.add(value);
      return encode ? encodeQueryComponent(value) : value;
    });
  const fillJson = (value: unknown): unknown => {
    if (typeof value === 'string') return fill(value, RAW_REFERENCE, false);
    if (Array.isArray(value)) return value.map(fillJson);
    if (typeof value === 'object' && value !== null)
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [fill(k, RAW_REFERENCE, false), fillJson(v)]));
    return value;
  };
  const resolved: RequestDescriptor = {
    method: request.method,
    url: fill(request.url, REFERENCE, true),
    headers: Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k, fill(v, RAW_REFERENCE, false)])),
  };
  if (request.body?.kind === 'json') resolved.body = { kind: 'json', value: fillJson(request.body.value) };
  if (request.body?.kind === 'form') resolved.body = { kind: 'form', value: fill(request.body.value, REFERENCE, true) };
  return { request: resolved, secrets: [...secrets] };
}

/** `text` with every secret (as is, and percent-encoded) replaced by `***`. */
function scrubSecrets(text: string, secrets: readonly string[]): string {
  let result = text;
  for (const secret of secrets) {
    if (secret === '') continue;
    for (const form of new Set([secret, encodeQueryComponent(secret), encodeURIComponent(secret)])) result = result.split(form).join('***');
  }
  return result;
}

/** Replaces the secrets in an error's message (and its causes' messages, and its `url`) in place; returns it. */
export function scrubError<E>(err: E, secrets: readonly string[]): E {
  if (secrets.length === 0) return err;
  const seen = new Set<unknown>();
  let current: unknown = err;
  while (current instanceof Error && !seen.has(current)) {
    seen.add(current);
    const scrubbed = scrubSecrets(current.message, secrets);
    if (scrubbed !== current.message) Object.defineProperty(current, 'message', { value: scrubbed, configurable: true, writable: true });
    if (current.stack) Object.defineProperty(current, 'stack', { value: scrubSecrets(current.stack, secrets), configurable: true, writable: true });
    for (const field of ['url', 'details'] as const) {
      const value = (current as unknown as Record<string, unknown>)[field];
      if (value === undefined || value === null) continue;
      const scrubbedField = JSON.parse(scrubSecrets(JSON.stringify(value), secrets)) as unknown;
      Object.defineProperty(current, field, { value: scrubbedField, configurable: true, writable: true, enumerable: true });
    }
    current = (current as { cause?: unknown }).cause;
  }
  return err;
}

/**
 * `text` with every `${env:NAME}` filled from the worker's environment (not encoded); each value filled is added to
 * `secrets` (to scrub errors). Same rules and failures as {@link resolveRequestSecrets}.
 */
export function resolveSecretString(text: string, source: SecretSource, secrets: Set<string>): string {
  return text.replace(RAW_REFERENCE, (_m, name: string) => {
    const value = valueOf(name, source);
    secrets.add(value);
    return value;
  });
}

// user functions and authentication
/**
 * A copy of any JSON value with every `${env:NAME}` in its strings filled (keys too), and the values filled (to
 * scrub). For what the activity needs besides the request itself: deferred calls, authentication settings.
 */
export function resolveJsonSecrets(json: unknown, source: SecretSource): { value: unknown; secrets: string[] } {
  const secrets = new Set<string>();
  const fill = (text: string) =>
    text.replace(RAW_REFERENCE, (_m, name: string) => {
      const value = valueOf(name, source);
      secrets.add(value);
      return value;
    });
  const visit = (value: unknown): unknown => {
    if (typeof value === 'string') return fill(value);
    if (Array.isArray(value)) return value.map(visit);
    if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [fill(k), visit(v)]));
    return value;
  };
  return { value: visit(json), secrets: [...secrets] };
}
