/**
 * The reference extractor's documentation examples of pagination (041–062, 116, 126, 127, 138–140), run with the plain
 * loop and the real page fetcher against a local mock that answers only the exact requests the reference sends:
 * the tables must be the reference's (names, columns in order, rows in order), and every request must be one the
 * mock knows.
 */
import { parseExtractorConfig } from '../../../src/extractor/config-schema';
import { createPageFetcher } from '../../../src/extractor/http/fetch-page';
import { runExtraction } from '../../../src/extractor/run-loop';
import { exampleConfig, expectedTables, startExamplesMock, type ExamplesMock } from './ge-examples-support';

const EXAMPLES = [
  '041-paging-stop-same',
  '042-paging-stop-same-2',
  '043-paging-stop-underflow',
  '044-paging-stop-underflow-struct',
  '045-next-page-flag-has-more',
  '046-next-page-flag-has-more-2',
  '047-next-page-flag-is-last',
  '048-force-stop',
  '049-pagination-offset-rename',
  '050-pagination-offset-override',
  '051-pagination-pagenum-basic',
  '052-pagination-pagenum-rename',
  '053-pagination-pagenum-override',
  '054-pagination-response-url-basic',
  '055-pagination-response-url-params',
  '056-pagination-response-url-params-override',
  '057-pagination-response-param-basic',
  '058-pagination-response-param-override',
  '059-pagination-response-param-scroll-request',
  '060-pagination-cursor-basic',
  '061-pagination-cursor-reverse',
  '062-pagination-multiple-scrollers',
  '116-multiple-conditions-multiple-jobs',
  '126-pagination-stop-limit',
  '127-pagination-stop-field',
  '138-pagination-stop-field-child-filter',
  '139-pagination-hasmore-child-filter',
  '140-pagination-forcestop-child-filter',
];

let mock: ExamplesMock;
beforeAll(async () => {
  mock = await startExamplesMock();
});
afterAll(async () => {
  await mock.close();
});

describe('Generic Extractor documentation examples: pagination', () => {
  it.each(EXAMPLES)('%s produces the reference tables from exactly the reference requests', async (folder) => {
    const from = mock.requests.length;
    const config = parseExtractorConfig(exampleConfig(folder, mock.url));
    const result = await runExtraction(config, { fetchPage: createPageFetcher({ maxAttempts: 1 }) });
    const expected = expectedTables(folder);

    expect(Object.keys(result.tables).sort()).toEqual(Object.keys(expected).sort());
    for (const [name, table] of Object.entries(expected)) {
      const actual = result.tables[name];
      expect({ name, columns: actual.columns }).toEqual({ name, columns: table.columns });
      expect({ name, rows: actual.rows.map((row) => actual.columns.map((c) => row[c])) }).toEqual({ name, rows: table.rows });
      expect(table.manifest.incremental ?? false).toBe(false);
      expect(table.manifest.primary_key ?? []).toEqual([]);
    }
    // every request matched a mock file (an unknown one gets a 404, which fails the run before this)
    expect(mock.requests.length).toBeGreaterThan(from);
  });
});
