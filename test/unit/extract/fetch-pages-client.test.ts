/**
 * The page-fetching activity sends requests as the configuration's client options say (the durable path, in step
 * with `runExtraction`): ignored statuses become data, and the AWS secret key is resolved from the worker's
 * environment only for sending (the input and result keep the reference).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import type { ActivityDeps } from '../../../src/activities/deps';
import { fetchPages, type FetchPagesInput, type FetchPagesResult } from '../../../src/activities/extract-fetch-pages';
import { parseExtractorConfig } from '../../../src/extractor/config-schema';
import { createScrollerState } from '../../../src/extractor/scroller';
import { createHttpPools } from '../../../src/http';
import { readText, stageStoreOf } from '../../../src/object-storage/stage-store';
import { exampleConfig, pointAt, startExampleServer, type ExampleServer } from '../extractor/ge-examples';

const http = createHttpPools();
let server: ExampleServer;
beforeAll(async () => {
  server = await startExampleServer();
});
afterAll(async () => {
  await server?.close();
  await http.close();
});

const deps = () => ({ settings: { stagingUrl: mkdtempSync(join(tmpdir(), 'fetch-client-')) }, userS3: () => undefined, http }) as unknown as ActivityDeps;

/** The input of the first job, or of its first child job run at `childEndpoint` (placeholders filled). */
function inputFor(raw: Record<string, unknown>, childEndpoint?: string): FetchPagesInput {
  const config = parseExtractorConfig(pointAt(raw, server.url));
  const top = config.config.jobs[0]!;
  const job = childEndpoint ? { ...top.children[0]!, endpoint: childEndpoint } : top;
  return {
    runKey: 'wf/run',
    runNo: 1,
    job,
    context: {},
    state: createScrollerState(job, config.api, Date.now()),
    maxPages: 10,
    maxMs: 60_000,
    client: config.api.client,
  };
}

async function run(d: ActivityDeps, input: FetchPagesInput): Promise<FetchPagesResult> {
  const env = new MockActivityEnvironment({ workflowExecution: { workflowId: 'wf', runId: 'run' } }, { logger: new DefaultLogger('ERROR') });
  return (await env.run(fetchPages(d), input)) as FetchPagesResult;
}

describe('fetchPages with the configuration client options', () => {
  test('a status in api.http.ignoreErrors is staged as {"errorData": body} (example 132)', async () => {
    const d = deps();
    const result = await run(d, inputFor(exampleConfig('132-ignore-errors'), 'user/124'));
    expect(result.pages).toBe(1);
    const store = stageStoreOf(d);
    const [key] = await store.list('wf/run/r');
    expect((await readText(store, key!)).trim()).toBe(JSON.stringify({ errorData: 'not found' }));
  });

  test('AWS signing resolves #secretKey from the worker environment at send time; the input keeps the reference', async () => {
    const raw = exampleConfig('143-aws-signature-request') as { parameters: { aws: { signature: { credentials: Record<string, string> } } } };
    raw.parameters.aws.signature.credentials['#secretKey'] = '${env:SAPI_SECRET_GE_AWS_TEST}';
    process.env.SAPI_SECRET_GE_AWS_TEST = 'testSecretKey';
    process.env.SAPI_SECRET_GE_AWS_TEST_HOSTS = '127.0.0.1,localhost';
    try {
      const input = inputFor(raw as unknown as Record<string, unknown>);
      server.requests.length = 0;
      const result = await run(deps(), input);
      expect(result.pages).toBe(1);
      expect(String(server.requests[0]?.headers.authorization)).toMatch(/^AWS4-HMAC-SHA256 Credential=testAccessKey\//);
      expect(JSON.stringify(input)).not.toContain('testSecretKey');
      expect(JSON.stringify(result)).not.toContain('testSecretKey');
    } finally {
      delete process.env.SAPI_SECRET_GE_AWS_TEST;
      delete process.env.SAPI_SECRET_GE_AWS_TEST_HOSTS;
    }
  });
});
