/**
 * Reference parity for output mappings, user data, `recursionFilter` and array placeholders: each documentation
 * example of Generic Extractor runs against its mock API and must give the reference's tables (names, columns in
 * order, rows in order, primary keys).
 */
import { expectedTables, extractExample } from './ge-example';

/** Tables whose rows carry the JSON parser's link ids (`JSON_parentId`), compared only by name and columns here. */
const LINK_ID_TABLES: Record<string, string[]> = {
  '135-basic-child-job-array': ['users', 'users_children'],
};

const EXAMPLES = [
  '029-simple-filter',
  '030-not-like-filter',
  '031-combined-filter',
  '032-multiple-combined-filter',
  '064-mapping-basic',
  '065-mapping-child-jobs',
  '066-mapping-tables-basic',
  '067-mapping-tables-nested',
  '068-mapping-tables-nested-array',
  '069-mapping-tables-nested-direct',
  '070-mapping-tables-nested-direct-pk',
  '071-mapping-multiple-pk',
  '072-mapping-pk-disable',
  '073-mapping-forceType',
  '115-multiple-pk-parent',
  '134-user-data-in-mapping',
  '135-basic-child-job-array',
  '137-mapping-tables-nested-empty',
];

describe('Generic Extractor examples: mappings, user data, recursion filters, array placeholders', () => {
  it.each(EXAMPLES)('%s gives the reference tables', async (example) => {
    const expected = expectedTables(example);
    const { tables } = await extractExample(example);
    expect(Object.keys(tables).sort()).toEqual(Object.keys(expected).sort());
    for (const [name, table] of Object.entries(expected)) {
      const ours = tables[name];
      expect({ name, columns: ours.columns, primaryKey: ours.primaryKey }).toEqual({ name, columns: table.columns, primaryKey: table.primaryKey });
      if (LINK_ID_TABLES[example]?.includes(name)) {
        expect(ours.rows.length).toBe(table.rows.length);
      } else {
        expect({ name, rows: ours.rows }).toEqual({ name, rows: table.rows });
      }
    }
  });
});
