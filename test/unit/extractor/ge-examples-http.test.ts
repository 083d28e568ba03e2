/**
 * Reference examples of the HTTP client options and the run's output mode, run against a local mock of their API and
 * compared with the reference's `_sample_out/` (tables, columns, rows in order, manifest flags).
 */
import { parseExtractorConfig } from '../../../src/extractor/config-schema';
import { createPageFetcher } from '../../../src/extractor/http/fetch-page';
import { runExtraction, type ExtractionResult } from '../../harness/run-extraction';
import { exampleConfig, pointAt, sampleTables, startExampleServer, storageSafe, withEnvSecrets, type ExampleServer } from './ge-examples';

let server: ExampleServer;
beforeAll(async () => {
  server = await startExampleServer();
});
afterAll(() => server?.close());
beforeEach(() => server && (server.requests.length = 0));

/** Runs an example as the conformance harness does: origin rewritten, `#` values as env references. */
export async function runExample(example: string, sleeps: number[] = []): Promise<ExtractionResult> {
  const { config, env } = withEnvSecrets(pointAt(exampleConfig(example), server.url));
  const fetchPage = createPageFetcher({
    secrets: { env, prefix: 'SAPI_SECRET_' },
    sleep: async (ms) => void sleeps.push(ms),
  });
  return runExtraction(parseExtractorConfig(config), { fetchPage });
}

/**
 * The result's tables as the reference's samples: names, columns and rows in order, incremental flag. With
 * `anyColumnOrder`, columns are compared as a set and rows as records (for column-order rules owned elsewhere).
 */
function expectSample(result: ExtractionResult, example: string, { anyColumnOrder = false } = {}) {
  const shape = (name: string, columns: string[], rows: string[][], incremental: boolean) => {
    const safe = columns.map(storageSafe);
    return anyColumnOrder
      ? { name: storageSafe(name), columns: [...safe].sort(), rows: rows.map((r) => Object.fromEntries(safe.map((c, i) => [c, r[i]]))), incremental }
      : { name: storageSafe(name), columns: safe, rows, incremental };
  };
  const expected = sampleTables(example).map((t) => shape(t.name, t.columns, t.rows, t.incremental));
  const actual = Object.entries(result.tables)
    .map(([name, t]) =>
      shape(
        name,
        t.columns,
        t.rows.map((r) => t.columns.map((c) => r[c] ?? '')),
        result.incremental,
      ),
    )
    .sort((a, b) => a.name.localeCompare(b.name));
  expect(actual).toEqual(expected);
}

describe('Generic Extractor examples: headers, incremental output, retries, ignored errors', () => {
  test('040: config.http.headers are sent (the API requires X-AppKey) and api.http.requiredHeaders is satisfied', async () => {
    const result = await runExample('040-required-headers');
    expect(server.requests.map((r) => [r.uri, r.headers['x-appkey']])).toEqual([['/040-required-headers/users', 'ThisIsSecret']]);
    expectSample(result, '040-required-headers');
  });

  test('074: config.http.headers without requiredHeaders are sent too', async () => {
    expectSample(await runExample('074-http-headers'), '074-http-headers');
  });

  test('075: incrementalOutput marks the tables incremental', async () => {
    const result = await runExample('075-incremental-output');
    expect(result.incremental).toBe(true);
    expectSample(result, '075-incremental-output');
  });

  test('037: a 202 listed in retryConfig.http.codes is retried maxRetries times, waiting X-RetryAfter, then used as data', async () => {
    const sleeps: number[] = [];
    const result = await runExample('037-retry-header', sleeps);
    expect(server.requests.map((r) => r.uri)).toEqual(Array(4).fill('/037-retry-header/users'));
    expect(sleeps).toEqual([1000, 1000, 1000]);
    expectSample(result, '037-retry-header');
  });

  test('132: a 404 listed in api.http.ignoreErrors gives its body as {"errorData": …} and the run goes on', async () => {
    const result = await runExample('132-ignore-errors');
    expect(server.requests.map((r) => r.uri)).toEqual([
      '/132-ignore-errors/users',
      '/132-ignore-errors/user/123',
      '/132-ignore-errors/user/124',
      '/132-ignore-errors/user/234',
    ]);
    // the reference puts parent_id after errorData (its parser appends parent columns last): the JSON parser's rule
    expectSample(result, '132-ignore-errors', { anyColumnOrder: true });
  });

  test('143: every request is signed with AWS Signature V4 (the secret key resolved from its env reference)', async () => {
    const result = await runExample('143-aws-signature-request');
    const auth = String(server.requests[0]?.headers.authorization);
    expect(auth).toMatch(
      /^AWS4-HMAC-SHA256 Credential=testAccessKey\/\d{8}\/testRegion\/testService\/aws4_request, SignedHeaders=[a-z0-9;-]*host[a-z0-9;-]*, Signature=[0-9a-f]{64}$/,
    );
    expect(server.requests[0]?.headers['x-amz-date']).toMatch(/^\d{8}T\d{6}Z$/);
    expectSample(result, '143-aws-signature-request');
  });

  test.each(['131-ssh-tunnel', '133-ssh-tunnel-iterations-params'])('%s: sshProxy is refused at validation, naming the key', (example) => {
    const { config } = withEnvSecrets(exampleConfig(example));
    expect(() => parseExtractorConfig(config)).toThrow(/parameters\.sshProxy.*'sshProxy' \(an SSH tunnel to the API\) is not supported/s);
  });
});
