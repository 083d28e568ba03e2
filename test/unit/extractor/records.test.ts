import { resolveRecords } from '../../../src/extractor/records';
import type { DataFieldConfig } from '../../../src/extractor/types';

const job = (dataField: DataFieldConfig | null = null) => ({ dataField, endpoint: 'items' });
const at = (path: string, delimiter = '.') => job({ path, delimiter });

describe('finding the records of a response', () => {
  it('reads dataField as a dot path with numeric array segments', () => {
    expect(resolveRecords({ data: [{ rows: [{ id: 1 }] }] }, at('data.0.rows')).records).toEqual([{ id: 1 }]);
  });

  it('reads dataField with a custom delimiter, keys with dots stay whole', () => {
    expect(resolveRecords({ 'a.b': { c: [1] } }, at('a.b/c', '/')).records).toEqual([1]);
  });

  it('takes the whole response for "." and for a path equal to the delimiter', () => {
    expect(resolveRecords([{ id: 1 }], at('.')).records).toEqual([{ id: 1 }]);
    expect(resolveRecords({ id: 1 }, at('/', '/')).records).toEqual([{ id: 1 }]);
  });

  it.each([[null], [''], [0], ['0'], [[]], [false]])('gives no records and a warning when dataField holds %j', (value) => {
    const result = resolveRecords({ items: value }, at('items'));
    expect(result.records).toEqual([]);
    expect(result.warnings).toEqual(["dataField 'items' contains no data! (endpoint: items)"]);
  });

  it('gives no records and a warning when dataField does not resolve', () => {
    expect(resolveRecords({ other: [1] }, at('items')).warnings).toHaveLength(1);
  });

  it('auto-detects the only root array and ignores root objects and scalars', () => {
    expect(resolveRecords({ count: 1, meta: { x: [1, 2] }, rows: [{ id: 1 }] }, job()).records).toEqual([{ id: 1 }]);
  });

  it('auto-detection treats an empty root array as the data array', () => {
    expect(resolveRecords({ rows: [], next: null }, job())).toEqual({ records: [], warnings: [] });
  });

  it('names every root array when more than one is found', () => {
    expect(() => resolveRecords({ a: [], b: [], c: 1, d: [] }, job())).toThrow(
      "More than one array found in response! Use 'dataField' parameter to specify a key to the data array. (endpoint: items, arrays in response root: a, b, d)",
    );
  });

  it('rejects a scalar response without dataField', () => {
    expect(() => resolveRecords('hello', job())).toThrow(/Unknown response from API/);
  });
});
