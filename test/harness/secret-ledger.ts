/**
 * The secrets a test run hands out (Storage tokens, object-store keys, extractor secret values, codec keys), noted
 * in the run's data folder so that the global teardown can scan every workflow history of the run for them
 * (`scanHistoriesForSecrets`). Values are only ever compared, never printed.
 */
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { historyText } from './history';
import { STACK_STATE_ENV, testStack } from './stack-state';

const LEDGER = 'secrets.jsonl';

/** A secret of this run, by what it is. */
export interface NotedSecret {
  what: string;
  value: string;
}

/** Notes `value` as a secret that must never appear in a workflow history (no-op outside the integration tiers). */
export function noteSecret(what: string, value: string, dataDir?: string): void {
  const dir = dataDir ?? (process.env[STACK_STATE_ENV] ? testStack().dataDir : undefined);
  if (!dir || value.length < 6) return;
  appendFileSync(join(dir, LEDGER), `${JSON.stringify({ what, value })}\n`);
}

function notedSecrets(dataDir: string): NotedSecret[] {
  const file = join(dataDir, LEDGER);
  if (!existsSync(file)) return [];
  const seen = new Map<string, NotedSecret>();
  for (const line of readFileSync(file, 'utf8').split('\n')) if (line) seen.set(line, JSON.parse(line) as NotedSecret);
  return [...seen.values()];
}

/** Object-store credentials in clear (temporary keys cross history sealed, `v1.…`) and presigned URLs. */
const CLEAR_CREDENTIALS = /"(SecretAccessKey|SessionToken|secretAccessKey|sessionToken)"\s*:\s*"[^"]|(X-Amz-Signature)=/;

/** What a scan found: the workflow and what leaked (never the value). */
export interface SecretFinding {
  workflowId: string;
  runId: string;
  what: string;
}

/**
 * Reads every workflow history in `namespace` at `address` and returns where a noted secret, or object-store
 * credentials in clear, appear (payloads decoded to text, failures and headers included).
 */
export async function scanHistoriesForSecrets(address: string, namespace: string, dataDir: string): Promise<{ histories: number; findings: SecretFinding[] }> {
  const secrets = notedSecrets(dataDir);
  const connection = await Connection.connect({ address });
  const findings: SecretFinding[] = [];
  let histories = 0;
  try {
    const client = new Client({ connection, namespace });
    for await (const execution of client.workflow.list()) {
      const handle = client.workflow.getHandle(execution.workflowId, execution.runId);
      const text = await historyText(handle);
      histories++;
      const at = { workflowId: execution.workflowId, runId: execution.runId };
      for (const secret of secrets) if (text.includes(secret.value)) findings.push({ ...at, what: secret.what });
      const clear = CLEAR_CREDENTIALS.exec(text);
      if (clear) findings.push({ ...at, what: `object-store credentials in clear (${clear[1] ?? clear[2]})` });
    }
  } finally {
    await connection.close();
  }
  return { histories, findings };
}
