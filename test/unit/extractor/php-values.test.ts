import { phpFloatString, phpJsonEncode, phpNumberString, phpSerialize } from '../../../src/extractor/php-values';

describe("PHP's text forms of decoded JSON values (the reference's hashing and cells)", () => {
  it('serializes a decoded object like PHP serialize() of a stdClass (byte lengths of UTF-8 strings)', () => {
    expect(phpSerialize({ id: 123, name: 'Jöhn', ok: true, no: false, none: null, tags: ['a'], o: {} })).toBe(
      'O:8:"stdClass":7:{s:2:"id";i:123;s:4:"name";s:5:"Jöhn";s:2:"ok";b:1;s:2:"no";b:0;s:4:"none";N;' +
        's:4:"tags";a:1:{i:0;s:1:"a";}s:1:"o";O:8:"stdClass":0:{}}',
    );
  });

  it('serializes floats with 17 significant digits (serialize_precision 17), integers as integers', () => {
    expect(phpSerialize(0.1)).toBe('d:0.10000000000000001;');
    expect(phpSerialize(1.5)).toBe('d:1.5;');
    expect(phpSerialize(-3)).toBe('i:-3;');
    expect(phpSerialize(1e-7)).toBe('d:9.9999999999999995E-8;');
    expect(phpSerialize(2 ** 64)).toBe('d:1.8446744073709552E+19;');
  });

  it('prints floats in cells with precision 14, as PHP string conversion does', () => {
    expect(phpNumberString(0.1 + 0.2)).toBe('0.3');
    expect(phpNumberString(1.5e-7)).toBe('1.5E-7');
    expect(phpNumberString(123.456)).toBe('123.456');
    expect(phpNumberString(42)).toBe('42');
    expect(phpFloatString(1e15, 14)).toBe('1.0E+15');
    expect(phpFloatString(0.0001, 14)).toBe('0.0001');
  });

  it('JSON-encodes like json_encode: slashes and non-ASCII escaped, floats with 17 digits', () => {
    expect(phpJsonEncode({ url: 'a/b', s: 'é😀', n: [0.1, 2, null, true], e: {}, l: [] })).toBe(
      '{"url":"a\\/b","s":"\\u00e9\\ud83d\\ude00","n":[0.10000000000000001,2,null,true],"e":{},"l":[]}',
    );
    expect(phpJsonEncode('line\nbreak\t"q"\u0001')).toBe('"line\\nbreak\\t\\"q\\"\\u0001"');
  });
});
