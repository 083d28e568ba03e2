/**
 * User functions of Generic-Extractor configurations: `{"function": "md5", "args": [...]}` objects, nested, and
 * context references (`{"attr": "path"}`, `{"time": "previousStart"}`, `{"placeholder": "value"}`, `{"response": …}`,
 * …). Pure module (no clock, no crypto): "now" is passed in and hashing/encoding functions get their implementation
 * from the caller, so the workflow can evaluate what it can and leave the rest to the activity.
 *
 * Semantics follow the reference's code builder:
 * - the functions are exactly {@link USER_FUNCTIONS} (placeholders also allow `urlencode`); any other name is
 *   "Illegal function";
 * - an object with `function` is a call (its `args` evaluated first); an object with exactly one key that names a
 *   context of this place is a reference to `context[key][value]`, where each context is flattened to dot paths
 *   (`{"attr": "server.port"}`), and a missing or null value is an error; any other object or array is kept, its
 *   members evaluated; scalars are themselves;
 * - PHP semantics: `concat` joins strings, `implode(glue, array)`, `ifempty(a, b)` (PHP `empty()`), `sprintf` (PHP
 *   format, `%'c05d` padding), `date(format[, ts])` and `strtotime(text[, base])` in UTC (see `./php-time`),
 *   `time()` in seconds; `md5`, `sha1`, `base64_encode`, `hash_hmac(algo, data, key)` as hex/base64 of UTF-8.
 *
 * **Deferred calls.** A call is *deferred* (kept as a call with literal arguments, to be finished by the activity
 * right before the request is sent) when it needs an implementation the caller did not give (`crypto`), or when one
 * of its arguments holds a secret reference (`${env:NAME}`) and the function would change it (anything but `concat`,
 * `implode`, `ifempty`, which keep the reference intact): the value of a secret never exists in the workflow.
 */
import { ExtractorConfigError } from './errors';
import { phpDate, phpStrtotime } from './php-time';
import { hasReference } from './secrets';
import type { DeferredValue, ExtractRunTimes } from './types';

/** The reference's function set. */
export const USER_FUNCTIONS = ['md5', 'sha1', 'time', 'date', 'strtotime', 'base64_encode', 'hash_hmac', 'sprintf', 'concat', 'ifempty', 'implode'] as const;

/** Functions that need a {@link CryptoFunctions} implementation (node:crypto in activities). */
const CRYPTO_FUNCTIONS: ReadonlySet<string> = new Set(['md5', 'sha1', 'base64_encode', 'hash_hmac']);

/** Functions that carry a `${env:NAME}` reference through unchanged, so they can run before secrets are filled. */
const REFERENCE_SAFE: ReadonlySet<string> = new Set(['concat', 'implode', 'ifempty']);

/** Hashing and encoding, given by the caller (activities: `nodeCryptoFunctions` of `./http/node-functions`). */
export interface CryptoFunctions {
  md5(text: string): string;
  sha1(text: string): string;
  base64Encode(text: string): string;
  /** Hex HMAC of `data` with `key`; throws for an algorithm it does not know. */
  hmac(algorithm: string, data: string, key: string): string;
}

/** Values of a place's contexts by name (`attr`, `time`, `placeholder`, …); each is flattened to dot paths. */
export type FunctionContext = Record<string, unknown>;

/** Options of {@link evaluateFunctions}. */
interface EvaluateOptions {
  /** "Now" in ms since the epoch, for `time()`, `date(format)` and relative `strtotime`. */
  nowMs: number;
  /** Hashing/encoding; without it those calls are deferred. */
  crypto?: CryptoFunctions;
  /** Functions allowed here besides {@link USER_FUNCTIONS} (placeholders: `urlencode`). */
  extraFunctions?: readonly string[];
  /** Where the value is in the configuration, for error messages (`parameters.config.jobs[0].params.token`). */
  path: string;
}

/** A call left for the activity: the function and its arguments (literals, or nested deferred calls as call objects). */
export class DeferredCall {
  constructor(readonly call: { function: string; args: unknown[] }) {}
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** True for `{"function": …}` objects. */
export function isFunctionCall(value: unknown): value is { function: unknown; args?: unknown } {
  return isObject(value) && 'function' in value;
}

/** PHP's `flattenArray`: nested objects/arrays to `a.b.0` keys, leaves only. */
export function flattenContext(value: unknown, prefix = '', into: Record<string, unknown> = {}): Record<string, unknown> {
  if (isObject(value) || Array.isArray(value)) {
    const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
    for (const [k, v] of entries) {
      if (isObject(v) || Array.isArray(v)) flattenContext(v, `${prefix}${k}.`, into);
      else into[`${prefix}${k}`] = v;
    }
  }
  return into;
}

/** PHP's string conversion of a scalar (`true` → "1", `false`/`null` → ""). */
export function phpString(value: unknown): string {
  if (value === null || value === undefined || value === false) return '';
  if (value === true) return '1';
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : String(value).replace('e+', 'E+').replace(/e-/, 'E-');
  if (Array.isArray(value)) return 'Array';
  return JSON.stringify(value);
}

/** PHP's `empty()`. */
export function phpEmpty(value: unknown): boolean {
  return (
    value === null || value === undefined || value === false || value === '' || value === '0' || value === 0 || (Array.isArray(value) && value.length === 0)
  );
}

function hasSecret(value: unknown): boolean {
  if (typeof value === 'string') return hasReference(value);
  if (value instanceof DeferredCall) return true;
  if (Array.isArray(value)) return value.some(hasSecret);
  if (isObject(value)) return Object.values(value).some(hasSecret);
  return false;
}

function hasDeferred(value: unknown): boolean {
  if (value instanceof DeferredCall) return true;
  if (Array.isArray(value)) return value.some(hasDeferred);
  if (isObject(value)) return Object.values(value).some(hasDeferred);
  return false;
}

/** The deferred calls inside a value turned back into plain call objects (JSON). */
export function deferredToJson(value: unknown): unknown {
  if (value instanceof DeferredCall) return { function: value.call.function, args: value.call.args.map(deferredToJson) };
  if (Array.isArray(value)) return value.map(deferredToJson);
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, deferredToJson(v)]));
  return value;
}

function fail(path: string, message: string): never {
  throw new ExtractorConfigError([{ path, message: `User script error: ${message}` }]);
}

const num = (v: unknown): number => (typeof v === 'number' ? v : typeof v === 'boolean' ? Number(v) : Number.parseFloat(phpString(v)) || 0);

/** PHP `urlencode`: RFC 1738 (space → `+`; only letters, digits, `-_.` stay). */
export function phpUrlencode(text: string): string {
  return encodeURIComponent(text)
    .replace(/[!'()*~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, '+');
}

/** PHP's `sprintf`: `%[argnum$][flags][width][.precision]specifier` with flags `-`, `+`, space, `0`, `'c`. */
export function phpSprintf(format: string, args: readonly unknown[]): string {
  let next = 0;
  return format.replace(
    /%(?:(\d+)\$)?((?:[-+ 0]|'.)*)(\d+)?(?:\.(\d+))?([bcdeEfFgGosuxX%])/g,
    (_whole: string, argnum: string | undefined, flags: string, width: string | undefined, precision: string | undefined, spec: string) => {
      if (spec === '%') return '%';
      const index = argnum !== undefined ? Number(argnum) - 1 : next++;
      if (index >= args.length) throw new Error(`${args.length + 1} arguments are required, ${args.length} given`);
      const arg = args[index];
      let padChar = ' ';
      let left = false;
      let plus = false;
      for (let i = 0; i < flags.length; i++) {
        const f = flags[i]!;
        if (f === '-') left = true;
        else if (f === '+') plus = true;
        else if (f === '0') padChar = '0';
        else if (f === ' ') padChar = ' ';
        else if (f === "'") padChar = flags[++i] ?? ' ';
      }
      const prec = precision === undefined ? undefined : Number(precision);
      let body: string;
      let sign = '';
      switch (spec) {
        case 'd': {
          const n = Math.trunc(num(arg));
          sign = n < 0 ? '-' : plus ? '+' : '';
          body = String(Math.abs(n));
          break;
        }
        case 'u':
          body = String(Math.trunc(num(arg)) >>> 0);
          break;
        case 'f':
        case 'F': {
          const n = num(arg);
          sign = n < 0 ? '-' : plus ? '+' : '';
          body = Math.abs(n).toFixed(prec ?? 6);
          break;
        }
        case 'e':
        case 'E': {
          const n = num(arg);
          sign = n < 0 ? '-' : plus ? '+' : '';
          body = Math.abs(n)
            .toExponential(prec ?? 6)
            .replace(/e([+-])(\d)$/, 'e$1$2');
          if (spec === 'E') body = body.toUpperCase();
          break;
        }
        case 'g':
        case 'G':
          body = String(num(arg));
          break;
        case 'b':
          body = (Math.trunc(num(arg)) >>> 0).toString(2);
          break;
        case 'o':
          body = (Math.trunc(num(arg)) >>> 0).toString(8);
          break;
        case 'x':
          body = (Math.trunc(num(arg)) >>> 0).toString(16);
          break;
        case 'X':
          body = (Math.trunc(num(arg)) >>> 0).toString(16).toUpperCase();
          break;
        case 'c':
          return String.fromCharCode(Math.trunc(num(arg)));
        default: {
          const s = phpString(arg);
          body = prec === undefined ? s : s.slice(0, prec);
        }
      }
      const w = width === undefined ? 0 : Number(width);
      const len = sign.length + body.length;
      if (len >= w) return sign + body;
      const fill = padChar.repeat(w - len);
      if (left) return sign + body + (padChar === '0' ? ' '.repeat(w - len) : fill);
      return padChar === '0' ? sign + fill + body : fill + sign + body;
    },
  );
}

function call(name: string, args: unknown[], options: EvaluateOptions): unknown {
  const c = options.crypto;
  const nowS = Math.floor(options.nowMs / 1000);
  switch (name) {
    case 'md5':
      return c!.md5(phpString(args[0]));
    case 'sha1':
      return c!.sha1(phpString(args[0]));
    case 'base64_encode':
      return c!.base64Encode(phpString(args[0]));
    case 'hash_hmac': {
      if (args.length < 3) throw new Error(`hash_hmac() expects at least 3 arguments, ${args.length} given`);
      return c!.hmac(phpString(args[0]).toLowerCase(), phpString(args[1]), phpString(args[2]));
    }
    case 'time':
      return nowS;
    case 'date': {
      if (args.length < 1) throw new Error('date() expects at least 1 argument, 0 given');
      return phpDate(phpString(args[0]), args.length > 1 && args[1] !== null ? Math.trunc(num(args[1])) : nowS);
    }
    case 'strtotime': {
      if (args.length < 1) throw new Error('strtotime() expects at least 1 argument, 0 given');
      return phpStrtotime(phpString(args[0]), args.length > 1 && args[1] !== null ? Math.trunc(num(args[1])) : nowS);
    }
    case 'sprintf': {
      if (args.length < 1) throw new Error('sprintf() expects at least 1 argument, 0 given');
      return phpSprintf(phpString(args[0]), args.slice(1));
    }
    case 'concat':
      return args.map(phpString).join('');
    case 'implode': {
      const [glue, pieces] = args.length === 1 ? ['', args[0]] : [args[0], args[1]];
      const list = Array.isArray(pieces) ? pieces : isObject(pieces) ? Object.values(pieces) : null;
      if (list === null) throw new Error('implode(): Argument #2 ($array) must be of type ?array');
      return list.map(phpString).join(phpString(glue));
    }
    case 'ifempty': {
      if (args.length !== 2) throw new Error("Bad argument count for function 'ifempty'!");
      return phpEmpty(args[0]) ? args[1] : args[0];
    }
    case 'urlencode':
      return phpUrlencode(phpString(args[0]));
    default:
      throw new Error(`Attempted to call undefined method ${name}.`);
  }
}

/**
 * Evaluates the user functions and context references in `value` (see the module doc). The result may hold
 * {@link DeferredCall}s where a call has to wait for the activity. Errors are `ExtractorConfigError`s naming
 * `options.path` ("User script error: …", the reference's wording).
 */
export function evaluateFunctions(value: unknown, context: FunctionContext, options: EvaluateOptions): unknown {
  const flat: Record<string, Record<string, unknown>> = {};
  for (const [name, ctx] of Object.entries(context)) flat[name] = flattenContext(ctx);
  return build(value, flat, options);
}

function build(value: unknown, ctx: Record<string, Record<string, unknown>>, options: EvaluateOptions): unknown {
  if (Array.isArray(value)) return value.map((v) => build(v, ctx, options));
  if (!isObject(value)) return value;
  if ('function' in value) {
    const name = value.function;
    if (typeof name !== 'string' || !([...USER_FUNCTIONS, ...(options.extraFunctions ?? [])] as string[]).includes(name)) {
      fail(options.path, `Illegal function '${typeof name === 'string' ? name : JSON.stringify(name)}'!`);
    }
    const rawArgs = value.args === undefined ? [] : value.args;
    if (!Array.isArray(rawArgs) && !isObject(rawArgs)) fail(options.path, `the 'args' of function '${name}' must be an array.`);
    const args = (Array.isArray(rawArgs) ? rawArgs : Object.values(rawArgs)).map((a) => build(a, ctx, options));
    const needsCrypto = CRYPTO_FUNCTIONS.has(name) && options.crypto === undefined;
    if (hasDeferred(args) || needsCrypto || (!REFERENCE_SAFE.has(name) && hasSecret(args))) {
      return new DeferredCall({ function: name, args });
    }
    try {
      return call(name, args, options);
    } catch (err) {
      fail(options.path, (err as Error).message);
    }
  }
  const keys = Object.keys(value);
  if (keys.length === 1 && keys[0]! in ctx) {
    const name = keys[0]!;
    const key = value[name];
    if (isObject(key) || Array.isArray(key)) fail(options.path, `Error evaluating user function - ${name} '${JSON.stringify(key)}' is not a string!`);
    const found = ctx[name]![phpString(key)];
    if (found === undefined || found === null) fail(options.path, `Error evaluating user function - ${name} '${phpString(key)}' not found!`);
    return found;
  }
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, build(v, ctx, options)]));
}

// ---------------------------------------------------------------------------------------------------------------
// Deferred calls in requests: `${fn:N}` tokens.

/** The token that stands for deferred value `index` in a request (`${fn:0}`). */
const deferredToken = (index: number): string => `\${fn:${index}}`;

/** `${fn:N}` as written, or percent-encoded (URL, form body). */
export const DEFERRED_TOKEN = /(?:\$|%24)(?:\{|%7B)fn(?::|%3A)(\d+)(?:\}|%7D)/gi;

/**
 * Replaces every {@link DeferredCall} in `value` by a `${fn:N}` token, appending the call to `deferred` (which the
 * request carries); returns the value with tokens.
 */
export function tokenizeDeferred(value: unknown, deferred: DeferredValue[], nowMs: number): unknown {
  if (value instanceof DeferredCall) {
    deferred.push({ call: deferredToJson(value), nowMs });
    return deferredToken(deferred.length - 1);
  }
  if (Array.isArray(value)) return value.map((v) => tokenizeDeferred(v, deferred, nowMs));
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, tokenizeDeferred(v, deferred, nowMs)]));
  return value;
}

/** What request building needs to evaluate functions: the configuration's attributes and the run times. */
export interface FunctionScope {
  /** `parameters.config` without `jobs` (the `attr` context). */
  attributes: Record<string, unknown>;
  /** `null`: `previousStart` 0 and `currentStart` the job run's start. */
  runTimes: ExtractRunTimes | null;
}

/** The `time` context of a scope at `nowMs`. */
export function timeContext(scope: FunctionScope, nowMs: number): ExtractRunTimes {
  return scope.runTimes ?? { previousStart: 0, currentStart: Math.floor(nowMs / 1000) };
}

/** The function scope of a normalized configuration (its attributes and run times). */
export function functionScopeOf(config: { config: { attributes?: Record<string, unknown>; runTimes?: ExtractRunTimes | null } }): FunctionScope {
  return { attributes: config.config.attributes ?? {}, runTimes: config.config.runTimes ?? null };
}

/**
 * Static checks of the functions in a configuration value, before any request: function names (the reference's set
 * plus `extraFunctions`), `args` shapes, and references to the contexts whose keys are known now (`attr`, `time`).
 * `contexts` lists the context names of this place; known ones map to their flattened values, dynamic ones to null.
 */
export function functionIssues(
  value: unknown,
  path: string,
  contexts: Record<string, Record<string, unknown> | null>,
  extraFunctions: readonly string[] = [],
): Array<{ path: string; message: string }> {
  const issues: Array<{ path: string; message: string }> = [];
  const allowed = [...USER_FUNCTIONS, ...extraFunctions] as string[];
  const visit = (v: unknown, at: string) => {
    if (Array.isArray(v)) return v.forEach((x, i) => visit(x, `${at}[${i}]`));
    if (!isObject(v)) return;
    if ('function' in v) {
      if (typeof v.function !== 'string' || !allowed.includes(v.function)) {
        issues.push({
          path: at,
          message: `User script error: Illegal function '${typeof v.function === 'string' ? v.function : JSON.stringify(v.function)}'! (allowed: ${allowed.join(', ')})`,
        });
      }
      if (v.args !== undefined && !Array.isArray(v.args) && !isObject(v.args))
        issues.push({ path: `${at}.args`, message: `the 'args' of a function must be an array.` });
      if (v.args !== undefined) visit(v.args, `${at}.args`);
      return;
    }
    const keys = Object.keys(v);
    if (keys.length === 1 && keys[0]! in contexts) {
      const known = contexts[keys[0]!];
      const key = v[keys[0]!];
      if (isObject(key) || Array.isArray(key))
        issues.push({ path: at, message: `User script error: Error evaluating user function - ${keys[0]} '${JSON.stringify(key)}' is not a string!` });
      else if (known && (known[phpString(key)] === undefined || known[phpString(key)] === null)) {
        issues.push({ path: at, message: `User script error: Error evaluating user function - ${keys[0]} '${phpString(key)}' not found!` });
      }
      return;
    }
    for (const [k, x] of Object.entries(v)) visit(x, `${at}.${k}`);
  };
  visit(value, path);
  return issues;
}
