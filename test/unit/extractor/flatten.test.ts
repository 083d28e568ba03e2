import { createHash } from 'node:crypto';
import { cellValue, flattenRecords } from '../../../src/extractor/flatten';
import { PARENT_KEY_MARK as P } from '../../../src/extractor/json-parser';
import { columnNamesFor } from '../../../src/extractor/table-names';

describe('flattening records into rows', () => {
  it('turns scalars into cell text: true is "1", false and null are empty, numbers as printed', () => {
    expect([true, false, null, 0, 1.5, -2, 'x', ''].map(cellValue)).toEqual(['1', '', '', '0', '1.5', '-2', 'x', '']);
  });

  it('joins nested object keys into columns and skips empty objects', () => {
    const [table] = flattenRecords([{ id: 1, a: { b: { c: 'deep' }, e: {} } }], { dataType: 'things' });
    expect(table).toEqual({ name: 'things', keys: ['id', 'a.b.c'], rows: [{ id: '1', 'a.b.c': 'deep' }] });
  });

  it('puts scalar records into a data column and JSON-encodes array records', () => {
    const [table] = flattenRecords(['a', 2, null, ['x', 1]], { dataType: 'values' });
    expect(table.rows).toEqual([{ data: 'a' }, { data: '2' }, { data: '' }, { data: '["x",1]' }]);
  });

  it('links child-table rows to their parent row with the same id, also for arrays in nested objects', () => {
    const tables = flattenRecords([{ id: 1, address: { phones: ['1', '2'] } }], { dataType: 'users' });
    expect(tables.map((t) => t.name)).toEqual(['users', 'users_address_phones']);
    const link = tables[0].rows[0]['address.phones'];
    // the reference's id: the raw path of the object holding the array, then the MD5 of its serialized row
    expect(link).toMatch(/^users\.address_[0-9a-f]{32}$/);
    expect(tables[1].rows).toEqual([
      { data: '1', [P + 'JSON_parentId']: link },
      { data: '2', [P + 'JSON_parentId']: link },
    ]);
  });

  it('gives nested arrays of objects their own grandchild tables, parent columns last', () => {
    const tables = flattenRecords([{ id: 1, orders: [{ no: 'a', lines: [{ sku: 's' }] }] }], { dataType: 'users' });
    expect(tables.map((t) => [t.name, t.keys])).toEqual([
      ['users', ['id', 'orders']],
      ['users_orders', ['no', 'lines', P + 'JSON_parentId']],
      ['users_orders_lines', ['sku', P + 'JSON_parentId']],
    ]);
    expect(tables[2].rows[0][P + 'JSON_parentId']).toBe(tables[1].rows[0].lines);
  });

  it('makes link ids byte-identical to the reference (example 010: md5 of the PHP-serialized row)', () => {
    const tables = flattenRecords(
      [
        { id: 123, name: 'John Doe', tags: ['active', 'admin'] },
        { id: 234, name: 'Jane Doe', tags: ['active'] },
      ],
      { dataType: 'users' },
    );
    expect(tables[0].rows.map((r) => r.tags)).toEqual(['users_3ca896f39b257a4f2d2f4784e7680c87', 'users_a15f4be71e739e1b2ea32bd4209d756e']);
  });

  it('orders columns by the structure: a key a later row adds to a nested object stays next to its siblings (example 012)', () => {
    const [table] = flattenRecords(
      [
        { type: 'a', properties: { street: 's' } },
        { type: 'b', primary: true, properties: { city: 'c' } },
      ],
      { dataType: 'contacts' },
    );
    expect(table.keys).toEqual(['type', 'properties.street', 'properties.city', 'primary']);
    expect(table.rows[1]).toEqual({ type: 'b', 'properties.street': '', 'properties.city': 'c', primary: '1' });
  });

  it('upgrades a scalar to an array when another row has an array there (example 017)', () => {
    const tables = flattenRecords(
      [
        { id: 123, name: 'John Doe', tags: 'active' },
        { id: 234, name: 'Jane Doe', tags: ['active', 'admin'] },
      ],
      { dataType: 'users' },
    );
    expect(tables[0].rows.map((r) => r.tags)).toEqual(['users_c6f3e32262682b6efd6c85ad97d2d503', 'users_92df9d5b9af8821316172285b196318e']);
    expect(tables[1].rows.map((r) => r.data)).toEqual(['active', 'active', 'admin']);
  });

  it('fails on a value that is a scalar in one row and an object in another, naming the path', () => {
    expect(() => flattenRecords([{ color: 'green' }, { color: { r: 1 } }], { dataType: 'users' })).toThrow(
      'Error parsing response JSON: Unhandled nodeType change from "scalar" to "object" in "users.[].color"',
    );
    expect(() => flattenRecords([{ tags: ['a', { b: 1 }] }], { dataType: 'users' })).toThrow(
      'Unhandled nodeType change from "scalar" to "object" in "users.[].tags.[]"',
    );
  });

  it('JSON-encodes nested arrays the way PHP does (slashes and non-ASCII escaped)', () => {
    const warnings: string[] = [];
    const [root, child] = flattenRecords([{ m: [['a/b', 'é'], [1.5]] }], { dataType: 'x', warnings });
    expect(root.keys).toEqual(['m']);
    expect(child.rows.map((r) => r.data)).toEqual(['["a\\/b","\\u00e9"]', '[1.5]']);
    expect(warnings).toEqual(["Converting nested array 'x.[].m.[]' to JSON string."]);
  });

  it('derives link ids from the row content, so re-flattening a page gives the same ids', () => {
    const records = [{ id: 1, tags: ['a'] }];
    expect(flattenRecords(records, { dataType: 'u' })).toEqual(flattenRecords(records, { dataType: 'u' }));
    const other = flattenRecords([{ id: 2, tags: ['a'] }], { dataType: 'u' });
    expect(other[0].rows[0].tags).not.toBe(flattenRecords(records, { dataType: 'u' })[0].rows[0].tags);
  });

  it('appends parent columns to every root row; one clashing with a field is renamed and the field kept (example 025)', () => {
    const [table] = flattenRecords([{ parent_id: 'mine', n: 1 }, { n: 2 }], { dataType: 'orders', parentColumns: { parent_id: '7' } });
    expect(table.keys).toEqual(['parent_id', 'n', P + 'parent_id_u0']);
    expect(columnNamesFor(table.keys)).toEqual(['parent_id', 'n', 'parent_id_u0']);
    expect(table.rows).toEqual([
      { parent_id: 'mine', n: '1', [P + 'parent_id_u0']: '7' },
      { parent_id: '', n: '2', [P + 'parent_id_u0']: '7' },
    ]);
  });

  it('hashes a parent column with its decoded value only when that value gives the column its text', () => {
    const link = (parentValues: Record<string, unknown>) =>
      flattenRecords([{ lines: ['a'] }], { dataType: 'o', parentColumns: { parent_id: '8' }, parentValues })[0].rows[0].lines;
    const md5 = (text: string) => createHash('md5').update(text).digest('hex');
    expect(link({ parent_id: 8 })).toBe(`o_${md5('O:8:"stdClass":2:{s:5:"lines";a:1:{i:0;s:1:"a";}s:9:"parent_id";i:8;}')}`);
    expect(link({ parent_id: 7 })).toBe(`o_${md5('O:8:"stdClass":2:{s:5:"lines";a:1:{i:0;s:1:"a";}s:9:"parent_id";s:1:"8";}')}`);
  });

  it('makes parent ids of identical rows under different parents differ (parent columns are part of the row)', () => {
    const a = flattenRecords([{ tags: ['x'] }], { dataType: 'o', parentColumns: { parent_id: '1' } });
    const b = flattenRecords([{ tags: ['x'] }], { dataType: 'o', parentColumns: { parent_id: '2' } });
    expect(a[0].rows[0].tags).not.toBe(b[0].rows[0].tags);
  });
});
