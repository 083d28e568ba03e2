import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { runDemo } from '../../../src/demo';
import { noteSecret } from '../../harness/secret-ledger';
import { testStack } from '../../harness/stack-state';

describe('the demo with codec keys in its environment', () => {
  it("runs end to end (rows match) while its histories hold only ciphertext, decodable through the stack's codec server", async () => {
    const key = randomBytes(32).toString('base64');
    noteSecret("the demo test's codec key", key);
    const dataDir = mkdtempSync(join(testStack().dataDir, 'demo-codec-'));
    const lines: string[] = [];
    const result = await runDemo({ dataDir, env: { SAPI_CODEC_KEYS: `demo1:${key}` }, keep: true, log: (line) => lines.push(line) });
    try {
      expect(result.export.rowsMatch).toBe(true);
      expect(result.import.importedRowsCount).toBe(20_000);
      expect(result.extract?.records).toBe(95);
      expect(lines.join('\n')).toContain(`the Temporal UI decodes them through the codec server at ${result.stack.codecServer!.url}`);

      const history = await fetch(`${result.stack.temporal.httpApiUrl}/api/v1/namespaces/default/workflows/${result.import.workflowId}/history`);
      const raw = await history.text();
      expect(raw).toContain(`"encoding":"${Buffer.from('binary/encrypted').toString('base64')}"`);
      const started = JSON.parse(raw) as {
        history: {
          events: Array<{ workflowExecutionStartedEventAttributes?: { input: { payloads: Array<{ metadata: Record<string, string>; data: string }> } } }>;
        };
      };
      const input = started.history.events[0]!.workflowExecutionStartedEventAttributes!.input.payloads;
      expect(Buffer.from(input[0]!.data, 'base64').toString('latin1')).not.toContain('orders.csv');

      const decoded = await fetch(`${result.stack.codecServer!.url}/decode`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${result.stack.codecServer!.token}` },
        body: JSON.stringify({ payloads: input }),
      });
      expect(decoded.status).toBe(200);
      const [payload] = ((await decoded.json()) as { payloads: Array<{ data: string }> }).payloads;
      expect(JSON.parse(Buffer.from(payload!.data, 'base64').toString('utf8'))).toMatchObject({
        source: join(dataDir, 'files', 'orders.csv'),
        bucketId: 'in.c-demo',
        table: 'orders',
      });
    } finally {
      await result.stack.stop();
    }
  });
});
