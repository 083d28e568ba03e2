import { backoffDelayMs, parseRetryAfterMs, redactUrl } from '../../../src/extractor/http/retry-after';

describe('Retry-After and backoff', () => {
  const now = Date.parse('2025-01-01T00:00:00Z');

  it('reads delta seconds and HTTP dates, and ignores what it cannot read', () => {
    expect(parseRetryAfterMs('120', now)).toBe(120_000);
    expect(parseRetryAfterMs(['2'], now)).toBe(2_000);
    expect(parseRetryAfterMs('Wed, 01 Jan 2025 00:01:00 GMT', now)).toBe(60_000);
    expect(parseRetryAfterMs('Tue, 31 Dec 2024 00:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfterMs('soon', now)).toBeNull();
    expect(parseRetryAfterMs(undefined, now)).toBeNull();
  });

  it('backs off exponentially with jitter, capped', () => {
    expect([1, 2, 3, 4, 10].map((n) => backoffDelayMs(n, 100, 1_000, () => 1))).toEqual([100, 200, 400, 800, 1_000]);
    expect(backoffDelayMs(3, 100, 1_000, () => 0)).toBe(200);
  });

  it('redacts secret-looking query values in URLs shown in errors', () => {
    expect(redactUrl('https://a.test/x?page=2&api_key=abc&access_token=t&q=key')).toBe('https://a.test/x?page=2&api_key=***&access_token=***&q=key');
  });
});
