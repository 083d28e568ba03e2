import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { codecDataConverter, createCodecServer, EncryptionCodec, parseCodecKeys, type CodecServerHandle } from '../../../src/codec';
import { freePort } from '../../../src/dev/ports';
import { emulatorService, workerService } from '../../../src/dev/services';
import { startDevStack, type DevStack } from '../../../src/dev/stack';
import { startTemporal, type TemporalHandle } from '../../../src/dev/temporal';
import { launchChromium, type HeadlessChromium, type PageRequest } from '../../harness/chromium';
import { noteSecret } from '../../harness/secret-ledger';
import { testStack } from '../../harness/stack-state';

/** The Temporal UI's page of one workflow run (its Input and Results card sits above the event history). */
const workflowPage = (uiUrl: string, workflowId: string, runId: string) =>
  `${uiUrl}/namespaces/default/workflows/${encodeURIComponent(workflowId)}/${runId}/history`;

/** What the UI shows in the Input card for a payload it could not decode: the ciphertext as a base64 string. */
const CIPHERTEXT_INPUT = /\bInput\s*\n\s*"[A-Za-z0-9+/]{40,}={0,2}"/;

const decodeCalls = (requests: PageRequest[]) => requests.filter((request) => request.method === 'POST' && new URL(request.url).pathname.endsWith('/decode'));

describe("the dev stack's Temporal UI decodes payloads through the codec server", () => {
  const marker = `ui-visible-${randomBytes(5).toString('hex')}`;
  const runTag = Date.now().toString(36); // workflow ids are never encrypted: they must not hold the marker
  const keyEntry = `ui1:${randomBytes(32).toString('base64')}`;
  const keys = parseCodecKeys([keyEntry], 'test');
  let dataDir: string;
  let chromium: HeadlessChromium;
  let stack: DevStack;
  let connection: Connection;
  let input: { source: string; bucketId: string; table: string };
  let imported: { workflowId: string; runId: string };

  beforeAll(async () => {
    noteSecret("the UI test's codec key", keyEntry.slice('ui1:'.length));
    noteSecret('a value only the codec may reveal', marker);
    dataDir = mkdtempSync(join(testStack().dataDir, 'codec-ui-'));
    chromium = await launchChromium(join(dataDir, 'chromium'));
    // the dev stack as `sapi-temporal dev` runs it with SAPI_CODEC_KEYS set: UI on, emulator, worker with the codec
    stack = await startDevStack({ dataDir: join(dataDir, 'stack'), localRoots: [dataDir], codec: { keys }, services: [emulatorService(), workerService()] });
    noteSecret("the dev stack's codec server token", stack.codecServer!.token);
    noteSecret("the UI test's Storage token", stack.env.SAPI_TOKEN!);
    connection = await Connection.connect({ address: stack.temporal.address });
    const client = new Client({ connection, namespace: stack.temporal.namespace, dataConverter: codecDataConverter(keys) });
    input = { source: join(dataDir, `${marker}.csv`), bucketId: `in.c-${marker}`, table: 'orders' };
    writeFileSync(input.source, 'id,amount\n1,10\n2,20\n');
    const handle = await client.workflow.start('importTableWorkflow', {
      taskQueue: stack.taskQueue,
      workflowId: `ui-import-${runTag}`,
      args: [{ ...input, createBucket: true, polling: { initialMs: 200 } }],
    });
    await handle.result();
    imported = { workflowId: handle.workflowId, runId: handle.firstExecutionRunId };
  });

  afterAll(async () => {
    await connection?.close();
    await chromium?.close();
    await stack?.stop();
  });

  it("shows an import's input decoded on the workflow page, the codec server having answered the UI's decode calls", async () => {
    // what the server holds (and hands the browser) is encrypted: the value is nowhere in the raw history
    const raw = await fetch(`${stack.temporal.httpApiUrl}/api/v1/namespaces/default/workflows/${imported.workflowId}/history`);
    const rawText = await raw.text();
    expect(raw.status).toBe(200);
    expect(rawText).not.toContain(marker);
    expect(Buffer.from(rawText.replace(/[^A-Za-z0-9+/=]/g, ''), 'base64').toString('latin1')).not.toContain(marker);

    await chromium.page.open(workflowPage(stack.temporal.uiUrl, imported.workflowId, imported.runId));
    const text = await chromium.page.waitFor(`the decoded input ${input.source} on the workflow page`, (page) => page.includes(input.source));
    expect(text).toContain(`"bucketId": "${input.bucketId}"`);
    expect(text).toContain('"table": "orders"');
    // the result too: the table the import created
    expect(text).toContain(`"tableId": "${input.bucketId}.orders"`);
    const calls = decodeCalls(chromium.page.requests());
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.every((call) => call.url.startsWith(`${stack.codecServer!.url}/${stack.codecServer!.token}/decode`))).toBe(true);
    expect(calls.some((call) => call.status === 200)).toBe(true);
    // and the stack publishes what a shell needs to do the same (`temporal workflow show --codec-endpoint`)
    expect(stack.env).toMatchObject({
      SAPI_CODEC_KEYS: keyEntry,
      SAPI_CODEC_SERVER_URL: stack.codecServer!.url,
      SAPI_CODEC_SERVER_TOKEN: stack.codecServer!.token,
    });
  });

  describe('a UI whose codec endpoint is wrong or absent', () => {
    let temporal: TemporalHandle;
    let codecServer: CodecServerHandle;
    let uiPort: number;
    let started: { workflowId: string; runId: string };

    beforeAll(async () => {
      // a second Temporal with UI, and a codec server with the right keys that allows this UI's origin: the only
      // difference from the dev stack is the token the UI sends
      uiPort = await freePort();
      codecServer = await createCodecServer({
        codec: new EncryptionCodec(keys),
        token: randomBytes(24).toString('hex'),
        corsOrigins: [`http://127.0.0.1:${uiPort}`],
      });
      temporal = await startTemporal({ dataDir: join(dataDir, 'other-temporal'), uiPort, uiCodecEndpoint: `${codecServer.url}/wrong-token` });
      const other = await Connection.connect({ address: temporal.address });
      try {
        const client = new Client({ connection: other, namespace: temporal.namespace, dataConverter: codecDataConverter(keys) });
        // the same encrypted input; no worker needed, the input is in the started event
        const handle = await client.workflow.start('importTableWorkflow', { taskQueue: 'no-worker', workflowId: `ui-raw-${runTag}`, args: [input] });
        started = { workflowId: handle.workflowId, runId: handle.firstExecutionRunId };
      } finally {
        await other.close();
      }
    });

    afterAll(async () => {
      await temporal?.stop();
      await codecServer?.close();
    });

    it('shows no decoded input when the UI sends the codec server a wrong token (401)', async () => {
      await chromium.page.open(workflowPage(temporal.uiUrl, started.workflowId, started.runId));
      const text = await chromium.page.waitFor(
        'the workflow page with its input card after a refused decode call',
        (page, requests) => CIPHERTEXT_INPUT.test(page) && decodeCalls(requests).some((call) => call.status === 401),
      );
      expect(decodeCalls(chromium.page.requests()).every((call) => call.status === 401 || call.status === undefined)).toBe(true);
      expect(text).not.toContain(marker);
      expect(text).not.toContain(input.bucketId);
    });

    it('shows no decoded input when the UI has no codec endpoint', async () => {
      await temporal.stop();
      temporal = await startTemporal({ dataDir: join(dataDir, 'other-temporal'), port: temporal.port, uiPort });
      await chromium.page.open(workflowPage(temporal.uiUrl, started.workflowId, started.runId));
      const text = await chromium.page.waitFor('the workflow page with its (encrypted) input', (page) => CIPHERTEXT_INPUT.test(page));
      expect(decodeCalls(chromium.page.requests())).toEqual([]);
      expect(text).not.toContain(marker);
      expect(text).not.toContain(input.bucketId);
    });
  });
});
