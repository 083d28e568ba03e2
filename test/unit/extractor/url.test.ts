import { parseDurationMs } from '../../../src/extractor/duration';
import { getPath, isEmptyValue } from '../../../src/extractor/path';
import { setQueryParams, toQueryPairs } from '../../../src/extractor/url';

describe('query strings', () => {
  it('flattens nested params like http_build_query', () => {
    expect(toQueryPairs({ a: [1, 2], b: { c: true, d: false }, e: null })).toEqual([
      ['a[0]', '1'],
      ['a[1]', '2'],
      ['b[c]', '1'],
      ['b[d]', '0'],
    ]);
  });

  it('replaces same-name params in place, appends new ones and drops the fragment', () => {
    expect(
      setQueryParams('http://h/p?a=1&b=x%20y#frag', [
        ['b', '2'],
        ['c', '3'],
      ]),
    ).toBe('http://h/p?a=1&b=2&c=3');
  });

  it('keeps an endpoint query string as written when there is nothing to add', () => {
    expect(setQueryParams('http://h/p?a=1&b=2', [])).toBe('http://h/p?a=1&b=2');
  });
});

describe('paths and emptiness', () => {
  it('distinguishes an absent path from an explicit null', () => {
    expect(getPath({ a: null }, 'a')).toEqual({ found: true, value: null });
    expect(getPath({ a: null }, 'a.b')).toEqual({ found: false, value: undefined });
    expect(getPath({ a: [{ b: 1 }] }, 'a.0.b')).toEqual({ found: true, value: 1 });
    expect(getPath({ a: [1] }, 'a.x')).toEqual({ found: false, value: undefined });
  });

  it('treats absent, null, "", false, 0, "0" and [] as empty but not {} or "false"', () => {
    expect([undefined, null, '', false, 0, '0', []].every(isEmptyValue)).toBe(true);
    expect([{}, 'false', ' ', 1, '00', [0]].some(isEmptyValue)).toBe(false);
  });
});

describe('forceStop.time durations', () => {
  it.each([
    [30, 30_000],
    ['45', 45_000],
    ['30 seconds', 30_000],
    ['1 hour', 3_600_000],
    ['+2 days 3 hours', 183_600_000],
    ['1 week', 604_800_000],
    ['1 month', 2_678_400_000],
  ])('%j is %d ms', (input, ms) => {
    expect(parseDurationMs(input)).toBe(ms);
  });

  it.each([['soon'], ['1 parsec'], ['-1 hour'], ['']])('%j cannot be read', (input) => {
    expect(parseDurationMs(input)).toBeNull();
  });
});
