/**
 * What a person sees of a run in the Temporal UI (issue 23), in a real headless Chromium on the dev server's own UI
 * (2.54.1 with Temporal CLI 1.9.1): the run's "User Metadata" tab (`…/workflows/<id>/<run>/user-metadata`) shows the
 * static summary and details set at start and the current details (`setCurrentDetails`, read by the UI through the
 * `__temporal_workflow_metadata` query) of a running import; its "Metadata" tab the search attributes it set.
 *
 * That UI renders markdown (summary, details, current details) in same-origin frames of its own
 * (`/render?content=…`, frame ids `user-metadata-summary`, `user-metadata-details`, `user-metadata-current-details`),
 * so their text is read from those frames: the page's own text holds only their headings (an earlier version of this
 * test read only the page's text, opened the "Metadata" tab, and found none of them).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { runMetadata } from '../../../src/contracts/search-attributes';
import type { ImportTableInput, TransferProgress } from '../../../src/contracts/transfer';
import { freePort } from '../../../src/dev/ports';
import { startTemporal, type TemporalHandle } from '../../../src/dev/temporal';
import { launchChromium, type HeadlessChromium } from '../../harness/chromium';
import { eventually } from '../../harness/processes';
import { startSapiTestEnv, type SapiTestEnv } from '../../harness/sapi-env';
import { testStack } from '../../harness/stack-state';

describe('the Temporal UI shows what an import is and where it is', () => {
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

  /**
   * Polls the frames of the open page until `check` passes; on timeout throws with what the page and its frames
   * showed, and leaves a screenshot beside the test's data.
   */
  async function waitForFrames(what: string, check: (frames: Record<string, string>) => boolean, timeoutMs = 60_000): Promise<Record<string, string>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const frames = await chromium.page.frames();
      if (check(frames)) return frames;
      if (Date.now() > deadline) {
        const shot = join(env.dataDir, `ui-${Date.now()}.png`);
        await chromium.page.screenshot(shot).catch(() => undefined);
        throw new Error(
          `timed out after ${timeoutMs} ms waiting for ${what} (screenshot ${shot}); frames: ${JSON.stringify(frames)}\npage text:\n${(await chromium.page.text()).slice(0, 3000)}`,
        );
      }
      await sleep(250);
    }
  }

  it('shows the static summary and details, the current details while the import runs, and its search attributes', async () => {
    const client = new Client({ connection, namespace: temporal.namespace });
    const input: ImportTableInput = {
      source: join(env.dataDir, 'orders.csv'),
      bucketId: 'in.c-ui',
      table: 'orders',
      createBucket: true,
      polling: { initialMs: 200, maxMs: 1000 },
    };
    writeFileSync(input.source, 'id,amount\n1,10\n2,20\n');
    // the Storage job runs until the test has looked at the run while it waits for it
    env.emulator.faults.holdJob({ operationName: 'tableCreate', times: 1 });
    const metadata = runMetadata({ workflowType: 'importTableWorkflow', input }, 'operator-ui test');
    const handle = await client.workflow.start('importTableWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: `ui-view-${Date.now()}`,
      args: [input],
      ...metadata,
    });
    await eventually(
      async () => (await handle.query<TransferProgress>('progress').catch(() => undefined))?.jobId !== undefined,
      60_000,
      'the import never started its Storage job',
    );
    const { jobId } = await handle.query<TransferProgress>('progress');

    // the run's page a person opens from the workflow list, its "User Metadata" tab
    const runPage = `${temporal.uiUrl}/namespaces/${temporal.namespace}/workflows/${encodeURIComponent(handle.workflowId)}/${handle.firstExecutionRunId}`;
    await chromium.page.open(`${runPage}/user-metadata`);
    const page = await chromium.page.waitFor('the metadata page', (text) => text.includes('Current Details') && text.includes('Summary'), 60_000);
    expect(page).toContain('Details');
    const running = await waitForFrames('the summary, details and current details of the running import', (frames) =>
      Boolean(
        frames['user-metadata-summary']?.includes('→') && frames['user-metadata-details'] && /importing/.test(frames['user-metadata-current-details'] ?? ''),
      ),
    );
    expect(running['user-metadata-summary']!.trim()).toBe(metadata.staticSummary); // "import orders.csv → in.c-ui.orders (direct)"
    // the details' markdown, rendered: "**table**: in.c-ui.orders" reads "table: in.c-ui.orders"
    for (const line of ['source: ', 'table: in.c-ui.orders', 'mode: create', 'connection: default', 'started by: operator-ui test'])
      expect(running['user-metadata-details']).toContain(line);
    // the workflow's current details: what it does now, the Storage job it waits for
    expect(running['user-metadata-current-details']).toContain('import into in.c-ui.orders');
    expect(running['user-metadata-current-details']).toMatch(/phase importing/);
    expect(running['user-metadata-current-details']).toMatch(new RegExp(`job ${jobId}( \\w+)?`));

    env.emulator.faults.releaseJobs('tableCreate');
    await handle.result();
    // after the end, the same tab (opened anew) shows the final current details; the metadata tab the search attributes
    await chromium.page.open(`${runPage}/user-metadata`);
    await waitForFrames('the final current details', (frames) => /phase done/.test(frames['user-metadata-current-details'] ?? ''));
    await chromium.page.open(`${runPage}/metadata`);
    const text = await chromium.page.waitFor(
      'the search attributes on the metadata page',
      (shown) => shown.includes('"SapiTableId": "in.c-ui.orders"'),
      60_000,
    );
    for (const shown of ['"SapiOperation": "import"', '"SapiPhase": "done"', '"SapiRows": 2', '"SapiSourceKind": "local"']) expect(text).toContain(shown);
  });
});
