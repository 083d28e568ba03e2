import { decodeQueryString, parseBool, parseIntParam, parseList } from '../../../src/emulator/form';

describe('request parameter decoding', () => {
  test('tags[]=a and tags[0]=a both decode to arrays', () => {
    expect(decodeQueryString('tags[]=a&tags[]=b')).toEqual({ tags: ['a', 'b'] });
    expect(decodeQueryString('tags[1]=b&tags[0]=a')).toEqual({ tags: ['a', 'b'] });
  });

  test('nested whereFilters decode to objects with value lists', () => {
    expect(decodeQueryString('whereFilters[0][column]=id&whereFilters[0][operator]=eq&whereFilters[0][values][]=1&whereFilters[0][values][]=2')).toEqual({
      whereFilters: [{ column: 'id', operator: 'eq', values: ['1', '2'] }],
    });
  });

  test('a repeated plain key becomes an array and a single key stays a string', () => {
    expect(decodeQueryString('a=1&a=2&b=x')).toEqual({ a: ['1', '2'], b: 'x' });
  });

  test('booleans accept what the official clients send, in any case', () => {
    for (const v of [true, 1, '1', 'true', 'True']) expect(parseBool(v)).toBe(true);
    for (const v of [false, 0, '0', 'false', 'False', '']) expect(parseBool(v)).toBe(false);
    expect(parseBool('yes')).toBeUndefined();
  });

  test('integers and lists are parsed loosely but strictly typed', () => {
    expect(parseIntParam('42')).toBe(42);
    expect(parseIntParam(' 7 ')).toBe(7);
    expect(parseIntParam('4.2')).toBeUndefined();
    expect(parseList('a')).toEqual(['a']);
    expect(parseList(['a', 2])).toEqual(['a', '2']);
    expect(parseList(undefined)).toBeUndefined();
  });
});
