import { exportSql, parseTimeParam } from '../../../src/emulator/jobs/export-query';
import { type TableRecord } from '../../../src/emulator/model';

const table: TableRecord = {
  id: 'in.c-a.t',
  name: 't',
  bucketId: 'in.c-a',
  columns: ['id', 'name'],
  primaryKey: [],
  rowsCount: 0,
  dataSizeBytes: 0,
  created: '',
  lastImportDate: null,
  lastChangeDate: null,
};

describe('export query building', () => {
  test('values are quoted as SQL literals, never spliced', () => {
    const { sql } = exportSql(table, {
      bucketId: 'in.c-a',
      name: 't',
      gzip: false,
      fileType: 'csv',
      whereFilters: [{ column: 'name', operator: 'eq', values: ["x' OR 1=1 --"] }],
    });
    expect(sql).toContain(`"name" IN ('x'' OR 1=1 --')`);
  });

  test('without orderBy rows come in storage order, limited when asked', () => {
    const { sql, columns } = exportSql(table, { bucketId: 'in.c-a', name: 't', gzip: false, fileType: 'csv', limit: 5, columns: ['name'] });
    expect(columns).toEqual(['name']);
    expect(sql).toBe('SELECT "name" FROM "in.c-a"."t" LIMIT 5');
  });

  test('changedSince accepts unix seconds, ISO dates and relative times', () => {
    const now = Date.UTC(2024, 0, 10);
    expect(parseTimeParam('changedSince', '1700000000', now)).toBe(1_700_000_000_000);
    expect(parseTimeParam('changedSince', '2024-01-01T00:00:00Z', now)).toBe(Date.UTC(2024, 0, 1));
    expect(parseTimeParam('changedSince', '-2 days', now)).toBe(now - 2 * 86_400_000);
    expect(() => parseTimeParam('changedSince', 'soonish', now)).toThrow(/changedSince/);
  });
});
