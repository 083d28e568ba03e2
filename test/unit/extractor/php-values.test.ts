import { phpGcvt, phpJsonEncode, phpSerialize } from '../../../src/extractor/php-values';

describe('PHP value printing used for the reference hashes and JSON', () => {
  it('serializes decoded JSON objects as stdClass, lists as arrays, with byte lengths', () => {
    expect(phpSerialize({ id: 1, name: 'Žluť', tags: ['a'], ok: true, none: null, n: 1.5 })).toBe(
      'O:8:"stdClass":6:{s:2:"id";i:1;s:4:"name";s:6:"Žluť";s:4:"tags";a:1:{i:0;s:1:"a";}s:2:"ok";b:1;s:4:"none";N;s:1:"n";d:1.5;}',
    );
  });

  it('serializes configuration objects as PHP arrays (integer-like keys become integers)', () => {
    expect(phpSerialize({ tag: 'x', '5': 1 }, true)).toBe('a:2:{i:5;i:1;s:3:"tag";s:1:"x";}');
  });

  it('prints floats with 17 significant digits like serialize_precision 17', () => {
    expect(phpGcvt(0.1, 17)).toBe('0.10000000000000001');
    expect(phpGcvt(1e25, 17)).toBe('1.0000000000000001E+25');
    expect(phpGcvt(0.00001, 17)).toBe('1.0000000000000001E-5');
    expect(phpGcvt(0.0001, 17)).toBe('0.0001');
    expect(phpGcvt(1e15, 14)).toBe('1.0E+15');
    expect(phpGcvt(123.25, 14)).toBe('123.25');
  });

  it('json_encodes with escaped slashes and unicode, like PHP defaults', () => {
    expect(phpJsonEncode({ url: 'a/b', name: 'é', list: [1, 'x'] })).toBe('{"url":"a\\/b","name":"\\u00e9","list":[1,"x"]}');
  });
});
