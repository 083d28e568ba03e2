import { backoffDelayMs } from '../../../src/http';
import { classifyTransportError, decideRetry, DEFAULT_RETRY_POLICY, type RetryPolicy } from '../../../src/storage-api/retry-policy';

const backoffDelay = (attempt: number, policy: RetryPolicy, random: () => number) => backoffDelayMs(attempt, policy.baseDelayMs, policy.maxDelayMs, random);

const policy: RetryPolicy = { maxAttempts: 5, baseDelayMs: 500, maxDelayMs: 15_000, maxRetryAfterMs: 60_000 };
const maxRandom = (): number => 0.999999;
const now = Date.parse('2025-01-01T00:00:00Z');

function decide(outcome: Parameters<typeof decideRetry>[0]['outcome'], extra: Partial<Parameters<typeof decideRetry>[0]> = {}) {
  return decideRetry({ outcome, attempt: 1, idempotent: true, policy, nowMs: now, random: maxRandom, ...extra });
}

describe('retry policy', () => {
  it('has documented defaults: 5 attempts, 500 ms base, 15 s cap', () => {
    expect(DEFAULT_RETRY_POLICY).toEqual({ maxAttempts: 5, baseDelayMs: 500, maxDelayMs: 15_000, maxRetryAfterMs: 120_000 });
  });

  describe('for idempotent requests', () => {
    it.each([500, 502, 504, 599])('retries %i with backoff', (status) => {
      const d = decide({ kind: 'status', status });
      expect(d.retry).toBe(true);
    });

    it('retries 408', () => {
      expect(decide({ kind: 'status', status: 408 }).retry).toBe(true);
    });

    it('never retries 501', () => {
      expect(decide({ kind: 'status', status: 501 })).toMatchObject({ retry: false, mayHaveReachedService: false });
    });

    it.each([400, 401, 403, 404, 409, 410, 413, 422])('never retries %i', (status) => {
      expect(decide({ kind: 'status', status })).toMatchObject({ retry: false, mayHaveReachedService: false });
    });

    it('retries network errors whether or not they reached the service', () => {
      expect(decide({ kind: 'network', reach: 'maybe' }).retry).toBe(true);
      expect(decide({ kind: 'network', reach: 'no' }).retry).toBe(true);
    });

    it('does not retry network errors that retrying cannot fix (TLS)', () => {
      expect(decide({ kind: 'network', reach: 'no', retryable: false }).retry).toBe(false);
    });

    it('stops after maxAttempts', () => {
      expect(decide({ kind: 'status', status: 500 }, { attempt: 4 }).retry).toBe(true);
      expect(decide({ kind: 'status', status: 500 }, { attempt: 5 })).toMatchObject({ retry: false });
      expect(decide({ kind: 'status', status: 429, retryAfter: '1' }, { attempt: 5 })).toMatchObject({ retry: false });
    });
  });

  describe('backoff', () => {
    it('grows exponentially with full jitter and is capped', () => {
      expect(backoffDelay(1, policy, maxRandom)).toBe(499);
      expect(backoffDelay(2, policy, maxRandom)).toBe(999);
      expect(backoffDelay(3, policy, maxRandom)).toBe(1999);
      expect(backoffDelay(10, policy, maxRandom)).toBe(14_999);
      expect(backoffDelay(3, policy, () => 0)).toBe(0);
    });

    it('uses the backoff for 5xx', () => {
      const d = decide({ kind: 'status', status: 502 }, { attempt: 3 });
      expect(d).toEqual({ retry: true, delayMs: 1999, reason: '502' });
    });
  });

  describe('429 and 503', () => {
    it('waits Retry-After seconds', () => {
      expect(decide({ kind: 'status', status: 429, retryAfter: '7' })).toMatchObject({ retry: true, delayMs: 7000 });
      expect(decide({ kind: 'status', status: 503, retryAfter: '2' })).toMatchObject({ retry: true, delayMs: 2000 });
    });

    it('waits until a Retry-After HTTP date', () => {
      const at = new Date(now + 30_000).toUTCString();
      expect(decide({ kind: 'status', status: 503, retryAfter: at })).toMatchObject({ retry: true, delayMs: 30_000 });
    });

    it('caps a long Retry-After', () => {
      expect(decide({ kind: 'status', status: 429, retryAfter: '3600' })).toMatchObject({ retry: true, delayMs: 60_000 });
    });

    it('backs off when Retry-After is absent or garbage', () => {
      expect(decide({ kind: 'status', status: 429 }, { attempt: 2 })).toMatchObject({ retry: true, delayMs: 999 });
      expect(decide({ kind: 'status', status: 503, retryAfter: 'soon' }, { attempt: 1 })).toMatchObject({ retry: true, delayMs: 499 });
    });

    it('replays non-idempotent requests: the service did not perform them', () => {
      expect(decide({ kind: 'status', status: 429, retryAfter: '1' }, { idempotent: false })).toMatchObject({ retry: true, delayMs: 1000 });
      expect(decide({ kind: 'status', status: 503 }, { idempotent: false }).retry).toBe(true);
    });
  });

  describe('for non-idempotent POSTs', () => {
    it.each([500, 502, 504, 408])('does not replay after %i and says it may have reached the service', (status) => {
      expect(decide({ kind: 'status', status }, { idempotent: false })).toMatchObject({ retry: false, mayHaveReachedService: true });
    });

    it('does not replay after a network error that may have been sent', () => {
      expect(decide({ kind: 'network', reach: 'maybe' }, { idempotent: false })).toMatchObject({ retry: false, mayHaveReachedService: true });
    });

    it('replays after an error that provably did not reach the service', () => {
      expect(decide({ kind: 'network', reach: 'no' }, { idempotent: false }).retry).toBe(true);
    });

    it('does not claim a 4xx may have been performed', () => {
      expect(decide({ kind: 'status', status: 400 }, { idempotent: false })).toMatchObject({ retry: false, mayHaveReachedService: false });
    });
  });

  describe('classifyTransportError', () => {
    const err = (code: string): Error => Object.assign(new Error(code), { code });

    it('knows refused connections and DNS failures never reached the service', () => {
      expect(classifyTransportError(err('ECONNREFUSED'))).toMatchObject({ kind: 'network', reach: 'no', retryable: true });
      expect(classifyTransportError(err('ENOTFOUND'))).toMatchObject({ reach: 'no' });
      expect(classifyTransportError(new AggregateError([err('ECONNREFUSED'), err('ECONNREFUSED')]))).toMatchObject({ reach: 'no', code: 'ECONNREFUSED' });
    });

    it('treats a connect timeout as not reached', () => {
      expect(classifyTransportError(err('UND_ERR_CONNECT_TIMEOUT'))).toMatchObject({ kind: 'timeout', phase: 'connect', reach: 'no' });
    });

    it('treats resets and headers/body timeouts as maybe reached', () => {
      expect(classifyTransportError(err('ECONNRESET'))).toMatchObject({ kind: 'network', reach: 'maybe' });
      expect(classifyTransportError(err('UND_ERR_SOCKET'))).toMatchObject({ reach: 'maybe' });
      expect(classifyTransportError(err('UND_ERR_HEADERS_TIMEOUT'))).toMatchObject({ kind: 'timeout', phase: 'headers', reach: 'maybe' });
      expect(classifyTransportError(err('UND_ERR_BODY_TIMEOUT'))).toMatchObject({ kind: 'timeout', phase: 'body', reach: 'maybe' });
      expect(classifyTransportError(new Error('weird'))).toMatchObject({ reach: 'maybe', retryable: true });
    });

    it('finds codes in the cause chain', () => {
      const wrapped = new Error('fetch failed', { cause: err('ECONNREFUSED') });
      expect(classifyTransportError(wrapped)).toMatchObject({ reach: 'no' });
    });

    it('does not retry certificate errors', () => {
      expect(classifyTransportError(err('CERT_HAS_EXPIRED'))).toMatchObject({ retryable: false });
    });
  });
});
