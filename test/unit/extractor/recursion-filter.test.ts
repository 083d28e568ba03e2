import { ExtractorDataError } from '../../../src/extractor/errors';
import { matchesRecursionFilter, parseRecursionFilter } from '../../../src/extractor/recursion-filter';

const passes = (filter: string, row: unknown) => matchesRecursionFilter(parseRecursionFilter(filter), row);

describe('recursionFilter: the reference grammar (keboola/php-filter)', () => {
  it('compares strings exactly with == and != (values as PHP casts them)', () => {
    expect(passes('role==parent', { role: 'parent' })).toBe(true);
    expect(passes('role==parent', { role: 'Parent' })).toBe(false);
    expect(passes('role!=parent', { role: 'child' })).toBe(true);
    expect(passes('id==123', { id: 123 })).toBe(true);
    expect(passes('active==1', { active: true })).toBe(true);
    expect(passes('active==', { active: false })).toBe(true);
    expect(passes('missing==', {})).toBe(true);
    expect(passes('price==0.3', { price: 0.1 + 0.2 })).toBe(true); // PHP prints floats with 14 digits
  });

  it('compares numerically when both sides are numeric strings, else byte-wise', () => {
    expect(passes('id<400', { id: 345 })).toBe(true);
    expect(passes('id<400', { id: 1000 })).toBe(false); // "1000" < "400" as strings, not as numbers
    expect(passes('id>=345', { id: '345' })).toBe(true);
    expect(passes('name<b', { name: 'abc' })).toBe(true);
    expect(passes('name>b', { name: 'B' })).toBe(false);
  });

  it('matches like patterns where % is any run of characters', () => {
    expect(passes('type~~%min%', { type: 'administrator' })).toBe(true);
    expect(passes('type!~%min%', { type: 'user' })).toBe(true);
    expect(passes('type~~a.c', { type: 'abc' })).toBe(false); // only % is special
    expect(passes('type~~a.c', { type: 'a.c' })).toBe(true);
  });

  it('reads nested fields by dot path', () => {
    expect(passes('user.role==admin', { user: { role: 'admin' } })).toBe(true);
  });

  it('fails the extraction when the filtered field holds an object (PHP cannot cast it to a string)', () => {
    expect(() => passes('user==x', { user: { id: 1 } })).toThrow(ExtractorDataError);
    expect(passes('tags==Array', { tags: ['a'] })).toBe(true);
  });

  it('lets & bind tighter than |', () => {
    const filter = 'role==parent|id>300&id<400';
    expect(passes(filter, { role: 'parent', id: 123 })).toBe(true);
    expect(passes(filter, { role: 'child', id: 345 })).toBe(true);
    expect(passes(filter, { role: 'child', id: 456 })).toBe(false);
  });

  it('is whitespace-sensitive: the spaces belong to the path and the value', () => {
    expect(passes('role == parent', { role: 'parent' })).toBe(false);
    expect(passes('role == parent', { 'role ': ' parent' })).toBe(true);
  });

  it('refuses a condition without an operator and a dangling logical operator, with the reference messages', () => {
    expect(() => parseRecursionFilter('role')).toThrow("Error creating a filter from role: Operator couldn't be determined.");
    expect(() => parseRecursionFilter('role==a&')).toThrow("Error creating a filter from : Operator couldn't be determined.");
    expect(() => parseRecursionFilter('a==1&&b==2')).toThrow("Operator couldn't be determined");
  });
});
