import {
  MAX_FORM_DEPTH,
  MAX_FORM_INDEX,
  MAX_FORM_PAIRS,
  MAX_JSON_DEPTH,
  decodeQueryString,
  parseBool,
  parseIntParam,
  listItems,
  parseJsonBody,
  parseList,
} from '../../../src/emulator/form';

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

  test('list parameters: arrays, keyed objects and scalars give their items; undefined and JSON null are absent', () => {
    expect(listItems(['a', 'b'])).toEqual(['a', 'b']);
    expect(listItems({ 0: 'a', 1: 'b' })).toEqual(['a', 'b']);
    expect(listItems('a')).toEqual(['a']);
    expect(listItems(undefined)).toBeUndefined();
    expect(listItems(null)).toBeUndefined();
    expect(parseList(null)).toBeUndefined();
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

  const refused = (run: () => unknown) => {
    try {
      run();
    } catch (error) {
      return { status: (error as { status?: number }).status, code: (error as { code?: string }).code, message: (error as Error).message };
    }
    throw new Error('not refused');
  };

  test('prototype names are refused, plain or nested, and Object.prototype stays clean', () => {
    for (const query of ['__proto__[polluted]=1', 'a[__proto__][polluted]=1', 'constructor[prototype][polluted]=1', '__proto__=x']) {
      expect(refused(() => decodeQueryString(query))).toMatchObject({
        status: 400,
        code: 'storage.validation',
        message: expect.stringMatching(/is not a parameter name/),
      });
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  test('nesting, list indexes and the number of pairs are bounded', () => {
    expect(decodeQueryString(`a${'[x]'.repeat(MAX_FORM_DEPTH)}=1`)).toBeDefined();
    expect(refused(() => decodeQueryString(`a${'[x]'.repeat(MAX_FORM_DEPTH + 1)}=1`)).message).toMatch(/nested deeper than 16 levels/);
    expect(decodeQueryString(`t[${MAX_FORM_INDEX}]=a`)).toEqual({ t: ['a'] });
    expect(refused(() => decodeQueryString('t[4294967294]=a')).message).toMatch(/list index 4294967294 is above/);
    expect(refused(() => decodeQueryString('a=1&'.repeat(MAX_FORM_PAIRS + 1))).message).toMatch(/more than 20000 parameters/);
  });

  test('a JSON body nested deeper than the limit is refused before it is parsed; strings do not count', () => {
    expect(parseJsonBody(`${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}`)).toBeDefined();
    expect(parseJsonBody(JSON.stringify({ s: '[[[[{{{{'.repeat(100) }))).toEqual({ s: '[[[[{{{{'.repeat(100) });
    expect(refused(() => parseJsonBody('['.repeat(100_000)))).toMatchObject({ status: 400, message: 'request body is nested deeper than 64 levels' });
    expect(refused(() => parseJsonBody('{"a":'))).toMatchObject({ status: 400, message: expect.stringMatching(/^request body is not valid JSON/) });
  });
});
