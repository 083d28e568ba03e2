import { cellValue, flattenRecords } from '../../../src/extractor/flatten';

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
    expect(link).toMatch(/^users_address_[0-9a-f]{32}$/);
    expect(tables[1].rows).toEqual([
      { data: '1', JSON_parentId: link },
      { data: '2', JSON_parentId: link },
    ]);
  });

  it('gives nested arrays of objects their own grandchild tables', () => {
    const tables = flattenRecords([{ id: 1, orders: [{ no: 'a', lines: [{ sku: 's' }] }] }], { dataType: 'users' });
    expect(tables.map((t) => [t.name, t.keys])).toEqual([
      ['users', ['id', 'orders']],
      ['users_orders', ['no', 'lines', 'JSON_parentId']],
      ['users_orders_lines', ['sku', 'JSON_parentId']],
    ]);
    expect(tables[2].rows[0].JSON_parentId).toBe(tables[1].rows[0].lines);
  });

  it('derives link ids from the row content, so re-flattening a page gives the same ids', () => {
    const records = [{ id: 1, tags: ['a'] }];
    expect(flattenRecords(records, { dataType: 'u' })).toEqual(flattenRecords(records, { dataType: 'u' }));
    const other = flattenRecords([{ id: 2, tags: ['a'] }], { dataType: 'u' });
    expect(other[0].rows[0].tags).not.toBe(flattenRecords(records, { dataType: 'u' })[0].rows[0].tags);
  });

  it('appends parent columns to every root row, replacing a same-name field of the row', () => {
    const [table] = flattenRecords([{ parent_id: 'mine', n: 1 }, { n: 2 }], { dataType: 'orders', parentColumns: { parent_id: '7' } });
    expect(table.keys).toEqual(['parent_id', 'n']);
    expect(table.rows).toEqual([{ parent_id: '7', n: '1' }, { n: '2', parent_id: '7' }]);
  });

  it('makes parent ids of identical rows under different parents differ (parent columns are part of the row)', () => {
    const a = flattenRecords([{ tags: ['x'] }], { dataType: 'o', parentColumns: { parent_id: '1' } });
    const b = flattenRecords([{ tags: ['x'] }], { dataType: 'o', parentColumns: { parent_id: '2' } });
    expect(a[0].rows[0].tags).not.toBe(b[0].rows[0].tags);
  });
});
