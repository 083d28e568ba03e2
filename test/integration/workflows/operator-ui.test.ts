/**
 * What a person sees of a run in the Temporal UI (issue 23), in a real headless Chromium: the search attributes the
 * workflow set. (The UI 2.54 this dev server ships does not render the static summary/details or the current details
 * as page text we could find headless: operator-view.test.ts asserts them through DescribeWorkflowExecution and the
 * metadata query the UI uses.)
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { runMetadata } from '../../../src/contracts/search-attributes';
import type { ImportTableInput } from '../../../src/contracts/transfer';
import { freePort } from '../../../src/dev/ports';
import { startTemporal, type TemporalHandle } from '../../../src/dev/temporal';
import { launchChromium, type HeadlessChromium } from '../../harness/chromium';
import { startSapiTestEnv, type SapiTestEnv } from '../../harness/sapi-env';
import { testStack } from '../../harness/stack-state';

describe('the Temporal UI shows what an import is searchable by', () => {
  let temporal: TemporalHandle;
  let env: SapiTestEnv;
  let connection: Connection;
  let chromium: HeadlessChromium;
  beforeAll(async () => {
    // a Temporal with its web UI (the run's shared one is headless), and this file's worker on it
    temporal = await startTemporal({ dataDir: mkdtempSync(join(testStack().dataDir, 'ui-temporal-')), uiPort: await freePort() });
    env = await startSapiTestEnv('operator-ui', { env: { TEMPORAL_ADDRESS: temporal.address } });
    connection = await Connection.connect({ address: temporal.address });
    chromium = await launchChromium(join(env.dataDir, 'chromium'));
  });
  afterAll(async () => {
    await chromium?.close();
    await connection?.close();
    await env?.stop();
    await temporal?.stop();
  });

  it('shows the run\'s search attributes on its metadata page', async () => {
    const client = new Client({ connection, namespace: temporal.namespace });
    const input: ImportTableInput = { source: join(env.dataDir, 'orders.csv'), bucketId: 'in.c-ui', table: 'orders', createBucket: true, polling: { initialMs: 200 } };
    writeFileSync(input.source, 'id,amount\n1,10\n2,20\n');
    const handle = await client.workflow.start('importTableWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: `ui-view-${Date.now()}`,
      args: [input],
      ...runMetadata({ workflowType: 'importTableWorkflow', input }, 'operator-ui test'),
    });
    await handle.result();
    await chromium.page.open(`${temporal.uiUrl}/namespaces/${temporal.namespace}/workflows/${encodeURIComponent(handle.workflowId)}/${handle.firstExecutionRunId}/metadata`);
    const text = await chromium.page.waitFor('the search attributes on the metadata page', (page) => page.includes('"SapiTableId": "in.c-ui.orders"'), 60_000);
    for (const shown of ['"SapiOperation": "import"', '"SapiPhase": "done"', '"SapiRows": 2', '"SapiSourceKind": "local"']) expect(text).toContain(shown);
  });
});
