/**
 * The one place that decides whether an HTTP exchange with the Storage API is retried, and after how long.
 * Pure: no I/O, no clock or randomness unless passed in, so every branch is unit-tested.
 *
 * Rules:
 * - network errors, 408 and 5xx (except 501) → retry with capped exponential backoff and full jitter;
 * - 429 and 503 → wait `Retry-After` (seconds or HTTP date, capped), or back off when it is absent;
 * - other 4xx → never retried;
 * - non-idempotent requests (prepare, tables-async, import-async, export-async, bucket create, importer upload)
 *   are replayed only after failures that provably did not reach the service (connection refused, connect
 *   timeout, DNS) or that the service answered with "not now" (429, 503). Anything else that may have reached it
 *   stops with `mayHaveReachedService: true` so the caller reconciles (finds the job) instead of duplicating.
 */
import { errorCode } from '../errors';
import { backoffDelayMs, parseRetryAfterMs } from '../http';

/** Retry settings of the Storage API client. */
export interface RetryPolicy {
  /** Attempts in total, the first one included. Default {@link DEFAULT_RETRY_POLICY}.maxAttempts (5). */
  maxAttempts: number;
  /** Backoff base: the n-th retry waits up to `baseDelayMs × 2^(n-1)` (full jitter). Default 500 ms. */
  baseDelayMs: number;
  /** Cap of one backoff delay. Default 15 000 ms. */
  maxDelayMs: number;
  /** Cap of a wait asked by `Retry-After`; a longer ask is clipped to this. Default 120 000 ms. */
  maxRetryAfterMs: number;
}

/** Defaults: 5 attempts, 500 ms base, 15 s cap, `Retry-After` honoured up to 2 min. */
export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = Object.freeze({
  maxAttempts: 5,
  baseDelayMs: 500,
  maxDelayMs: 15_000,
  maxRetryAfterMs: 120_000,
});

/** Did a failed exchange possibly reach the service? `no` = provably not (refused, connect timeout, DNS). */
type Reach = 'no' | 'maybe';

/** What happened on one attempt. */
export type AttemptOutcome = { kind: 'status'; status: number; retryAfter?: string | null } | { kind: 'network'; reach: Reach; retryable?: boolean };

export interface RetryDecisionInput {
  outcome: AttemptOutcome;
  /** Attempts made so far, this one included (1 after the first failure). */
  attempt: number;
  /** GET/HEAD/DELETE and other requests safe to replay. */
  idempotent: boolean;
  policy?: RetryPolicy;
  /** Current time (ms since epoch) for HTTP-date `Retry-After`. Default `Date.now()`. */
  nowMs?: number;
  /** Random in [0, 1) for jitter. Default `Math.random`. */
  random?: () => number;
}

export type RetryDecision = { retry: true; delayMs: number; reason: string } | { retry: false; reason: string; mayHaveReachedService: boolean };

/** Decides whether to retry after a failed attempt, and how long to wait first. */
export function decideRetry(input: RetryDecisionInput): RetryDecision {
  const policy = input.policy ?? DEFAULT_RETRY_POLICY;
  const random = input.random ?? Math.random;
  const { outcome, attempt, idempotent } = input;
  const exhausted = attempt >= policy.maxAttempts;

  if (outcome.kind === 'network') {
    const mayHaveReached = outcome.reach === 'maybe';
    if (outcome.retryable === false) return { retry: false, reason: 'network error not worth retrying', mayHaveReachedService: mayHaveReached };
    if (!idempotent && mayHaveReached) {
      return { retry: false, reason: 'non-idempotent request may have reached the service', mayHaveReachedService: true };
    }
    if (exhausted) return { retry: false, reason: `gave up after ${attempt} attempts`, mayHaveReachedService: mayHaveReached };
    return {
      retry: true,
      delayMs: backoffDelayMs(attempt, policy.baseDelayMs, policy.maxDelayMs, random),
      reason: mayHaveReached ? 'network error' : 'request did not reach the service',
    };
  }

  const { status } = outcome;
  if (status === 429 || status === 503) {
    // The service said "not now": nothing was performed, so even a non-idempotent request can be replayed.
    if (exhausted) return { retry: false, reason: `gave up after ${attempt} attempts (${status})`, mayHaveReachedService: false };
    const asked = parseRetryAfterMs(outcome.retryAfter, input.nowMs ?? Date.now());
    const delayMs = asked !== undefined ? Math.min(asked, policy.maxRetryAfterMs) : backoffDelayMs(attempt, policy.baseDelayMs, policy.maxDelayMs, random);
    return { retry: true, delayMs, reason: asked !== undefined ? `${status} with Retry-After` : `${status} without Retry-After` };
  }
  if (status === 408 || (status >= 500 && status !== 501)) {
    if (!idempotent) {
      return { retry: false, reason: `non-idempotent request answered ${status}: it may have been performed`, mayHaveReachedService: true };
    }
    if (exhausted) return { retry: false, reason: `gave up after ${attempt} attempts (${status})`, mayHaveReachedService: true };
    return { retry: true, delayMs: backoffDelayMs(attempt, policy.baseDelayMs, policy.maxDelayMs, random), reason: `${status}` };
  }
  return { retry: false, reason: `${status} is not retryable`, mayHaveReachedService: false };
}

/** How a transport error (no HTTP answer) is treated. */
interface TransportErrorClass {
  kind: 'network' | 'timeout';
  /** For timeouts: which phase ran out. */
  phase?: 'connect' | 'headers' | 'body';
  reach: Reach;
  /** False for errors retrying cannot fix (TLS certificate problems, invalid arguments, aborted by us). */
  retryable: boolean;
  /** The code that decided it, e.g. `ECONNREFUSED`, `UND_ERR_HEADERS_TIMEOUT`. */
  code?: string;
}

/** Errors raised before any byte of the request left this process. */
const NOT_REACHED_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'ENETDOWN', 'EADDRNOTAVAIL']);

/** TLS/certificate problems: retrying cannot fix them. */
const FATAL_CODES = new Set([
  'CERT_HAS_EXPIRED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'UND_ERR_INVALID_ARG',
  'UND_ERR_ABORTED',
  'ABORT_ERR',
  'UND_ERR_DESTROYED',
  'UND_ERR_CLOSED',
]);

/**
 * Classifies an error thrown by undici (or Node's net/tls) while no HTTP status was received.
 * Happy-eyeballs `AggregateError`s are classified by their inner errors.
 */
export function classifyTransportError(err: unknown): TransportErrorClass {
  const codes = collectCodes(err);
  const code = codes[0];
  if (codes.includes('UND_ERR_CONNECT_TIMEOUT') || (codes.includes('ETIMEDOUT') && !codes.some((c) => c.startsWith('UND_ERR_')))) {
    // ETIMEDOUT from connect() on a fresh socket; undici reports its own connect timeout separately.
    return {
      kind: 'timeout',
      phase: 'connect',
      reach: 'no',
      retryable: true,
      code: codes.includes('UND_ERR_CONNECT_TIMEOUT') ? 'UND_ERR_CONNECT_TIMEOUT' : 'ETIMEDOUT',
    };
  }
  if (codes.includes('UND_ERR_HEADERS_TIMEOUT')) return { kind: 'timeout', phase: 'headers', reach: 'maybe', retryable: true, code: 'UND_ERR_HEADERS_TIMEOUT' };
  if (codes.includes('UND_ERR_BODY_TIMEOUT')) return { kind: 'timeout', phase: 'body', reach: 'maybe', retryable: true, code: 'UND_ERR_BODY_TIMEOUT' };
  const fatal = codes.find((c) => FATAL_CODES.has(c));
  if (fatal) return { kind: 'network', reach: 'no', retryable: false, code: fatal };
  if (codes.length > 0 && codes.every((c) => NOT_REACHED_CODES.has(c))) return { kind: 'network', reach: 'no', retryable: true, code };
  // ECONNRESET, EPIPE, UND_ERR_SOCKET, parser errors, unknown: the request may have been written.
  return { kind: 'network', reach: 'maybe', retryable: true, code };
}

function collectCodes(err: unknown, depth = 0): string[] {
  if (depth > 3 || err === null || typeof err !== 'object') return [];
  const out: string[] = [];
  const own = errorCode(err);
  if (own) out.push(own);
  if (err instanceof AggregateError) for (const inner of err.errors) out.push(...collectCodes(inner, depth + 1));
  if ('cause' in err && (err as { cause?: unknown }).cause !== undefined) out.push(...collectCodes((err as { cause?: unknown }).cause, depth + 1));
  return out;
}

/** What a transport error code means, in words a user acts on (the setting's value is named by the caller). */
const TRANSPORT_CAUSES: Readonly<Record<string, string>> = {
  ENOTFOUND: 'host not found (DNS)',
  EAI_AGAIN: 'host name could not be resolved now (DNS)',
  ECONNREFUSED: 'connection refused (nothing listens on that port)',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ECONNRESET: 'connection reset by the server',
  UND_ERR_CONNECT_TIMEOUT: 'no answer to connect (timed out)',
  ETIMEDOUT: 'no answer to connect (timed out)',
  UND_ERR_HEADERS_TIMEOUT: 'connected, but no response in time',
  CERT_HAS_EXPIRED: 'TLS: the server certificate has expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'TLS: the server certificate is self-signed (trust its CA with NODE_EXTRA_CA_CERTS)',
  SELF_SIGNED_CERT_IN_CHAIN: 'TLS: a self-signed certificate in the chain (trust its CA with NODE_EXTRA_CA_CERTS)',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'TLS: the server certificate cannot be verified (unknown CA; NODE_EXTRA_CA_CERTS)',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'TLS: the certificate issuer is unknown here (trust its CA with NODE_EXTRA_CA_CERTS)',
  ERR_TLS_CERT_ALTNAME_INVALID: 'TLS: the certificate does not name this host',
  EPROTO: 'TLS: protocol error (is it an HTTP port, not HTTPS?)',
  ERR_SSL_WRONG_VERSION_NUMBER: 'TLS: wrong version number (is it an HTTP port, not HTTPS?)',
};

/**
 * Why a request got no HTTP answer, in words (`host not found (DNS)`, `TLS: the certificate does not name this
 * host`), from the codes in the error and its causes; undefined when no code is known.
 */
export function transportCause(err: unknown): string | undefined {
  const codes = collectCodes(err);
  const known = codes.find((code) => TRANSPORT_CAUSES[code] !== undefined);
  return known === undefined ? undefined : `${TRANSPORT_CAUSES[known]} [${known}]`;
}
