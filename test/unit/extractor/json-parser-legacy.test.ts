import { createHash } from 'node:crypto';
import { flattenRecords, type FlatTable } from '../../../src/extractor/flatten';
import { legacySafeName } from '../../../src/extractor/json-parser-legacy';
import { columnNamesFor } from '../../../src/extractor/table-names';
import { alignRow, mergeTableSchema } from '../../../src/extractor/table-schema';

const md5 = (text: string) => createHash('md5').update(text).digest('hex');

/** A parsed table as the reference writes it: header names and rows of cells. */
function csv(table: FlatTable): { name: string; header: string[]; rows: string[][] } {
  return { name: table.name, header: columnNamesFor(table.keys), rows: table.rows.map((r) => alignRow(table.keys, r)) };
}

const legacy = (
  records: unknown[],
  options: { dataType: string; parentColumns?: Record<string, string>; parentValues?: Record<string, unknown>; warnings?: string[] },
) => flattenRecords(records, { ...options, legacy: true }).map(csv);

describe('the legacy JSON parser (compatLevel 1)', () => {
  it('lets a parent column overwrite a field of the same name and leaves an empty md5-named column (example 124)', () => {
    const record = { id: 123, name: 'John Doe', parent_id: 'admins', address: { city: 'London', country: 'UK', street: 'Whitehaven Mansions' } };
    const tables = legacy([record], { dataType: 'user-detail', parentColumns: { parent_id: '123' }, parentValues: { parent_id: 123 } });
    expect(tables).toEqual([
      {
        name: 'user-detail',
        header: ['id', 'name', 'parent_id', 'address_city', 'address_country', 'address_street', '6be379826b20cc58475f636e33f4606b'],
        rows: [['123', 'John Doe', '123', 'London', 'UK', 'Whitehaven Mansions', '']],
      },
    ]);
  });

  it('adds user data after the fields, replacing a field of the same name (example 125)', () => {
    const records = [
      { id: 123, name: 'John Doe', tag: 'CFO' },
      { id: 234, name: 'Jane Doe', tag: 'CTO' },
    ];
    const tables = legacy(records, { dataType: 'users', parentColumns: { tag: 'development', price: '$10' } });
    expect(tables[0].header).toEqual(['id', 'name', 'tag', 'e4d23e841d8e8804190027bce3180fa5', 'price']);
    expect(tables[0].rows).toEqual([
      ['123', 'John Doe', 'development', '', '$10'],
      ['234', 'Jane Doe', 'development', '', '$10'],
    ]);
  });

  it('links array items with <type>_<md5 of the serialized row> and a JSON_parentId column', () => {
    const tables = legacy([{ id: 1, tags: ['a', 'b'] }], { dataType: 'users' });
    const id = `users_${md5('O:8:"stdClass":2:{s:2:"id";i:1;s:4:"tags";a:2:{i:0;s:1:"a";i:1;s:1:"b";}}')}`;
    expect(tables).toEqual([
      { name: 'users', header: ['id', 'tags'], rows: [['1', id]] },
      {
        name: 'users_tags',
        header: ['data', 'JSON_parentId'],
        rows: [
          ['a', id],
          ['b', id],
        ],
      },
    ]);
  });

  it('names the ids of arrays inside objects by the raw type and the outer id', () => {
    const tables = legacy([{ id: 1, address: { phones: ['1'] } }], { dataType: 'my users' });
    const outer = `my users_${md5('O:8:"stdClass":2:{s:2:"id";i:1;s:7:"address";O:8:"stdClass":1:{s:6:"phones";a:1:{i:0;s:1:"1";}}}')}`;
    const inner = `my users.address_${md5(`O:8:"stdClass":1:{s:6:"phones";a:1:{i:0;s:1:"1";}}${outer}`)}`;
    expect(tables.map((t) => [t.name, t.header, t.rows])).toEqual([
      ['my_users', ['id', 'address_phones'], [['1', inner]]],
      ['my_users_address_phones', ['data', 'JSON_parentId'], [['1', inner]]],
    ]);
  });

  it('wraps a scalar into a child row where another row has an array, and JSON-encodes nested arrays', () => {
    const warnings: string[] = [];
    const tables = legacy([{ tags: 'x' }, { tags: ['y', ['z', 1.5]] }], { dataType: 't', warnings });
    expect(tables[1].rows.map((r) => r[0])).toEqual(['x', 'y', '["z",1.5]']);
    expect(tables[0].rows.map((r) => r[0])).toEqual(tables[1].rows.map((r) => r[1]).filter((v, i, all) => all.indexOf(v) === i));
    expect(warnings).toEqual(["Unsupported array nesting in 't.tags'! Converting to JSON string."]);
  });

  it('gives the link ids the reference parser tests expect (PrimaryKeyTest/hash, nested_hash_deep)', () => {
    const hash = legacy(
      [
        { pk: 1, arr: [1, 2, 3] },
        { pk: 2, arr: ['a', 'b', 'c'] },
      ],
      { dataType: 'hash' },
    );
    expect(hash[0].rows).toEqual([
      ['1', 'hash_1093df659ecbfa54288647bc2cf0fed1'],
      ['2', 'hash_cfa31c446955b5d513c7e6762ef3e8e9'],
    ]);
    expect(hash[1]).toMatchObject({ name: 'hash_arr', header: ['data', 'JSON_parentId'] });
    const row = (uri: string, createdAt: string, phrase: string, tag: unknown[]) => ({
      uri,
      createdAt,
      expectedPage: '',
      keyphrase: phrase,
      keyword: phrase,
      tags: { a: { b: { tag } } },
    });
    const deep = legacy(
      [
        row('firstStuff', '30/05/13', 'i fokin bash ur hed in', [{ '@value': 'parking@$$press' }]),
        row('secondStuff', '30/05/13', 'il rek u m8', [{ '@value': 'parking@$$press' }]),
        row('thirdStuff', '24/05/13', 'i sware on me mum', [{ '@value': 'I ARE' }, { '@value': 'POTATO' }]),
      ],
      { dataType: 'nested_hash_deep' },
    );
    expect(deep[0].header).toEqual(['uri', 'createdAt', 'expectedPage', 'keyphrase', 'keyword', 'tags_a_b_tag']);
    expect(deep[0].rows.map((r) => r[5])).toEqual([
      'nested_hash_deep.tags.a.b_b935481df58da518a79e444c65b98d31',
      'nested_hash_deep.tags.a.b_86f5c87f3fa5c4d96185045a038e430a',
      'nested_hash_deep.tags.a.b_00b55e4ed1445dd48d5dbe7f2e15a5c5',
    ]);
    expect(deep[1]).toMatchObject({ name: 'nested_hash_deep_tags_a_b_tag', header: ['value', 'JSON_parentId'] });
    expect(deep[1].rows.map((r) => r[0])).toEqual(['parking@$$press', 'parking@$$press', 'I ARE', 'POTATO']);
  });

  it('keeps runs of underscores and turns every non-ASCII byte into one', () => {
    expect(legacySafeName('a  b')).toBe('a__b');
    expect(legacySafeName('_id_')).toBe('id');
    expect(legacySafeName('název')).toBe('n__zev');
    const tables = legacy([{ 'first  name': 'x', meta_: { a: 1 } }], { dataType: 'u//v' });
    expect(tables[0]).toMatchObject({ name: 'u__v', header: ['first__name', 'meta_a'] });
  });

  it('shortens names longer than 64 bytes like the reference', () => {
    // a table name of the reference parser's own tests (RealDataTest::testTypeCharacters)
    expect(legacySafeName('a/b.c&d@e$f.statuses.retweeted_status.user.entities.url.urls.indices')).toBe('abcdefsrueuui__status_user_entities_url_urls_indices');
    const long = 'a'.repeat(70);
    expect(legacySafeName(long)).toBe(`${md5(long)}`);
    expect(legacySafeName(`word ${'b'.repeat(30)} other ${'c'.repeat(30)}`)).toBe(`wboc__other_${'c'.repeat(30)}`);
  });

  it('names the second column of a safe name by the md5 of its unsafe name; only the first gets values', () => {
    const tables = legacy([{ 'a b': 1, a_b: 2 }], { dataType: 'x' });
    expect(tables[0].header).toEqual(['a_b', md5('a_b')]);
    expect(tables[0].rows).toEqual([['2', '']]);
  });

  it('compares names as PHP does (numeric strings as numbers), so "01" after "1" fails as in the reference', () => {
    expect(() => legacy([{ '1': 3, '01': 4 }], { dataType: 'x' })).toThrow("Error parsing response JSON: Error assigning '4' to a non-existing column '01'!");
  });

  it('skips an object whose first property is an empty object, as the reference does', () => {
    const tables = legacy([{ id: 1, o: { e: {}, b: 2 }, p: { c: 3 } }], { dataType: 'x' });
    expect(tables[0].header).toEqual(['id', 'p_c']);
  });

  it('takes a page of one empty value as no data, as PHP compares it with [null], but not a page of two', () => {
    for (const only of [null, false, 0, '', []]) expect(legacy([only], { dataType: 'x' })).toEqual([]);
    expect(legacy(['0'], { dataType: 'x' })).toEqual([{ name: 'x', header: ['data'], rows: [['0']] }]);
    expect(legacy([0, 0], { dataType: 'x' })[0].rows).toEqual([['0'], ['0']]);
  });

  it('fails on incompatible types with the reference messages', () => {
    expect(() => legacy([{ c: 'green' }, { c: { r: 1 } }], { dataType: 'u' })).toThrow(
      'Error parsing response JSON: Unhandled type change from "scalar" to "object" in \'u.c\'',
    );
    expect(() => legacy([{ t: ['a', { b: 1 }] }], { dataType: 'u' })).toThrow(
      "Error parsing response JSON: Data array in 'u.t' contains incompatible data types 'scalar' and 'object'!",
    );
  });

  it('keeps its names verbatim and its parent columns last when pages are merged', () => {
    const page1 = flattenRecords([{ 'a  b': 1 }], { dataType: 'x', legacy: true, parentColumns: { p: '1' } });
    const page2 = flattenRecords([{ c: 2 }], { dataType: 'x', legacy: true, parentColumns: { p: '1' } });
    const schema = mergeTableSchema(mergeTableSchema({}, page1), page2);
    expect(columnNamesFor(schema.x)).toEqual(['a__b', 'c', 'p']);
  });
});
