/** One request the emulator saw. */
export interface RequestLogEntry {
  method: string;
  /** URL path without the query string. */
  path: string;
  /** Raw query string without `?` ('' when none). */
  query: string;
  /** HTTP status sent; 0 when the connection was reset or the response dropped by a fault. */
  status: number;
  /** When the request arrived (epoch ms). */
  time: number;
  durationMs: number;
  /** Fault action applied to this request, if any. */
  fault?: string;
  /**
   * The parsed JSON or form body (not multipart or file content), secrets redacted (see {@link redactBody}), cut to
   * {@link REQUEST_LOG_BODY_MAX_CHARS} characters of JSON (then a string ending in `…`); absent without a body.
   */
  body?: unknown;
}

/** Longest body kept in a request log entry, characters of its JSON. */
export const REQUEST_LOG_BODY_MAX_CHARS = 4096;
/** Keys whose values the request log never keeps: tokens, secrets, passwords, keys and Keboola's `#encrypted` values. */
const SECRET_KEY = /^#|token|secret|password|passwd|credential|private|api[-_]?key|access[-_]?key|authorization/i;
const REDACTED = '[redacted]';

/** A copy of a parsed body with the values of secret-looking keys replaced by `[redacted]`. */
export function redactBody(value: unknown, depth = 0): unknown {
  if (depth > 20) return REDACTED;
  if (Array.isArray(value)) return value.map((v) => redactBody(v, depth + 1));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, SECRET_KEY.test(k) ? REDACTED : redactBody(v, depth + 1)]));
  }
  return value;
}

/** What the log keeps of a body: redacted, and as a cut JSON string when longer than the bound. */
export function loggedBody(body: unknown): unknown {
  if (body === undefined || body === null || (typeof body === 'object' && Object.keys(body).length === 0)) return undefined;
  const redacted = redactBody(body);
  const json = JSON.stringify(redacted);
  return json.length > REQUEST_LOG_BODY_MAX_CHARS ? `${json.slice(0, REQUEST_LOG_BODY_MAX_CHARS)}…` : redacted;
}

/** A bounded, oldest-first request log; the array is exposed live on the handle. */
export class RequestLog {
  readonly entries: RequestLogEntry[] = [];
  constructor(private readonly limit: number) {}

  add(entry: RequestLogEntry): void {
    this.entries.push(entry);
    if (this.entries.length > this.limit) this.entries.splice(0, this.entries.length - this.limit);
  }

  clear(): void {
    this.entries.length = 0;
  }
}
