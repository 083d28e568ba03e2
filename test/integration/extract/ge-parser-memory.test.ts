/**
 * The JSON parsers' run-wide behaviour through the durable run (real Temporal dev server, the emulator, the
 * reference's documentation examples served by the ge-examples mock): one page per batch, so what spans pages and
 * jobs (renamed parent columns) must travel through the workflow's checkpoint; the legacy parser (compatLevel 1)
 * through staging and loading. Tables in Storage are compared with the reference's `_sample_out/`.
 */
import type { ExtractInput, ExtractResult } from '../../../src/contracts/extract';
import { startMockApi, type MockApi } from '../../harness/ge-examples/mock-api';
import { EXAMPLES_DIR, exampleConfig, expectedTables } from '../../harness/ge-examples/run-example';
import { startSapiTestEnv, type SapiTestEnv } from '../../harness/sapi-env';
import { FAST_FETCH } from './support';

describe('extractWorkflow and the JSON parsers across batches (reference examples)', () => {
  let env: SapiTestEnv;
  let mock: MockApi;
  let n = 0;

  beforeAll(async () => {
    [env, mock] = await Promise.all([startSapiTestEnv('parser-memory'), startMockApi(EXAMPLES_DIR)]);
  });
  afterAll(async () => {
    await mock?.close();
    await env?.stop();
  });

  async function runExample(folder: string): Promise<ExtractResult> {
    const { config } = exampleConfig(folder, mock.origin) as { config: { parameters: { config: { outputBucket?: string } } } };
    // a bucket per run: the examples share table names (`users`), and a load into an existing table keeps its columns
    config.parameters.config.outputBucket = `ge-parser-${folder.slice(0, 3)}-${Date.now()}`;
    const input: ExtractInput = { config, options: { fetch: FAST_FETCH, polling: { initialMs: 200, maxMs: 1000 }, batchPages: 1 } };
    const handle = await env.client.workflow.start('extractWorkflow', { taskQueue: env.taskQueue, workflowId: `ge-parser-${folder}-${++n}`, args: [input] });
    return (await handle.result()) as ExtractResult;
  }

  async function expectReferenceTables(folder: string, result: ExtractResult): Promise<void> {
    const expected = expectedTables(folder);
    expect(result.tables.map((t) => t.name).sort()).toEqual(Object.keys(expected).sort());
    for (const [name, table] of Object.entries(expected)) {
      const stored = await env.emulator.readTable(`${result.bucketId}.${name}`);
      expect({ name, columns: stored.columns, rows: stored.rows }).toEqual({ name, columns: table.columns, rows: table.rows });
    }
  }

  it('keeps a renamed parent column renamed in a later job, batch by batch (example 076: orders get tag_u0)', async () => {
    await expectReferenceTables('076-user-data', await runExample('076-user-data'));
  });

  it('loads the legacy parser tables: md5-named duplicate columns, user data replacing a field (examples 124, 125)', async () => {
    await expectReferenceTables('124-naming-conflict-legacy', await runExample('124-naming-conflict-legacy'));
    await expectReferenceTables('125-user-data-legacy', await runExample('125-user-data-legacy'));
  });
});
