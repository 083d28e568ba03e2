/**
 * Reference parity for output mappings, user data, `recursionFilter` and array placeholders: each documentation
 * example runs against the examples' mock API and must give the reference's tables (names, columns in order with
 * `-` → `_`, rows in order, primary keys). Complements `ge-examples.test.ts`, whose plain-loop column names keep `-`
 * (066–069 and 137 differ there only by that), and names the tables of 135 that carry the JSON parser's link ids.
 */
import { parseExtractorConfig } from '../../../src/extractor/config-schema';
import { runExtraction } from '../../../src/extractor/run-loop';
import { startMockApi, type MockApi } from '../../harness/ge-examples/mock-api';
import { EXAMPLES_DIR, EXAMPLES_NOW_MS, exampleConfig, expectedTables, type TableOut } from '../../harness/ge-examples/run-example';
import { createPageFetcher } from '../../../src/extractor/http/fetch-page';

/** Tables whose rows carry the JSON parser's link ids (`JSON_parentId`): compared by columns and row count here. */
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

const safe = (name: string) => name.replace(/-/g, '_');

describe('Generic Extractor examples: mappings, user data, recursion filters, array placeholders', () => {
  let mock: MockApi;
  beforeAll(async () => {
    mock = await startMockApi(EXAMPLES_DIR);
  });
  afterAll(() => mock?.close());

  async function extract(example: string): Promise<Record<string, TableOut>> {
    const { config } = exampleConfig(example, mock.origin);
    const result = await runExtraction(parseExtractorConfig(config), { fetchPage: createPageFetcher({ maxAttempts: 1 }), now: () => EXAMPLES_NOW_MS });
    const tables: Record<string, TableOut> = {};
    for (const [name, table] of Object.entries(result.tables)) {
      tables[name] = {
        columns: table.columns.map(safe),
        rows: table.rows.map((row) => table.columns.map((c) => row[c] ?? '')),
        primaryKey: (table.primaryKey ?? []).map(safe),
        incremental: false,
      };
    }
    return tables;
  }

  it.each(EXAMPLES)('%s gives the reference tables', async (example) => {
    const expected = expectedTables(example);
    const tables = await extract(example);
    expect(Object.keys(tables).sort()).toEqual(Object.keys(expected).sort());
    for (const [name, table] of Object.entries(expected)) {
      const ours = tables[name];
      expect({ name, columns: ours.columns, primaryKey: ours.primaryKey, incremental: ours.incremental }).toEqual({
        name,
        columns: table.columns,
        primaryKey: table.primaryKey,
        incremental: table.incremental,
      });
      if (LINK_ID_TABLES[example]?.includes(name)) expect(ours.rows.length).toBe(table.rows.length);
      else expect({ name, rows: ours.rows }).toEqual({ name, rows: table.rows });
    }
  });
});
