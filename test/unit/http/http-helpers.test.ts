import { backoffDelayMs, parseRetryAfterMs, redactUrl } from '../../../src/http';

describe('the shared HTTP helpers', () => {
  const now = Date.parse('2025-01-01T00:00:00Z');

  it('read Retry-After as seconds (decimals too) or an HTTP date', () => {
    expect(parseRetryAfterMs('0', now)).toBe(0);
    expect(parseRetryAfterMs(' 12 ', now)).toBe(12_000);
    expect(parseRetryAfterMs('1.5', now)).toBe(1500);
    expect(parseRetryAfterMs(['2'], now)).toBe(2_000);
    expect(parseRetryAfterMs('Wed, 01 Jan 2025 00:01:00 GMT', now)).toBe(60_000);
    expect(parseRetryAfterMs('Tue, 31 Dec 2024 23:00:00 GMT', now)).toBe(0);
  });

  it('refuse a Retry-After they cannot read instead of guessing (no letters and not a number is no date)', () => {
    for (const value of [undefined, null, '', '-5', 'later', 'soon', '2025-01-01']) expect(parseRetryAfterMs(value, now)).toBeUndefined();
  });

  it('back off exponentially with full jitter, capped', () => {
    expect([1, 2, 3, 4, 10].map((n) => backoffDelayMs(n, 100, 1_000, () => 0.999999))).toEqual([99, 199, 399, 799, 999]);
    expect(backoffDelayMs(3, 100, 1_000, () => 0)).toBe(0);
  });

  it('redact user info and secret-looking query values, keeping the rest', () => {
    expect(redactUrl('https://a.test/x?page=2&api_key=abc&access_token=t&q=key')).toBe('https://a.test/x?page=2&api_key=***&access_token=***&q=key');
    expect(redactUrl('https://user:pw@a.test/x?X-Amz-Credential=AK%2F1&X-Amz-Security-Token=s&X-Amz-Expires=3600')).toBe(
      'https://a.test/x?X-Amz-Credential=***&X-Amz-Security-Token=***&X-Amz-Expires=3600',
    );
    expect(redactUrl('https://a.test/plain')).toBe('https://a.test/plain');
  });
});
