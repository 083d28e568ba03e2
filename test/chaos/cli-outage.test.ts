import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { startTemporal, type TemporalHandle } from '../../src/dev/temporal';
import { restartTemporal } from '../harness/temporal-restart';
import { loadSettings } from '../../src/config';
import { startWorker } from '../../src/worker';
import type { TransferProgress } from '../../src/contracts/transfer';
import { eventually, repoRoot } from '../harness/processes';
import { startSapiTestEnv, type SapiTestEnv } from '../harness/sapi-env';
import { testStack, uniqueTaskQueue } from '../harness/stack-state';

const rowsCsv = (n: number) => `id,v\n${Array.from({ length: n }, (_, i) => `${i},v${i}`).join('\n')}\n`;
// longer than the Temporal client's own retries of a call (10 attempts, ~20 s), which used to be all the CLI had
const OUTAGE_MS = 25_000;

/** Runs `bin/sapi-temporal` against `temporal` as a child process; only the Temporal variables are set. */
function startCli(temporal: TemporalHandle, args: string[]) {
  const child = spawn(process.execPath, ['-r', resolve(repoRoot, 'scripts', 'ts-register.js'), resolve(repoRoot, 'bin', 'sapi-temporal.js'), '--', ...args], {
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_NAMESPACE: 'default',
      TEMPORAL_TASK_QUEUE: undefined,
      SAPI_URL: undefined,
      SAPI_TOKEN: undefined,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = { stdout: '', stderr: '' };
  child.stdout.on('data', (chunk: Buffer) => (output.stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output.stderr += chunk.toString()));
  const exited = new Promise<number | null>((ok) => child.once('close', ok));
  return { child, output, exited };
}

describe('the CLI follows a workflow through a Temporal outage', () => {
  let env: SapiTestEnv;
  beforeAll(async () => (env = await startSapiTestEnv('cli-outage', { worker: false })));
  afterAll(() => env?.stop());

  it("exits 0 with the import's result after Temporal was down for 25 s while it waited, and the rows are loaded once", async () => {
    const stack = testStack();
    const dataDir = join(env.dataDir, 'own-temporal');
    let temporal: TemporalHandle = await startTemporal({ dataDir, headless: true });
    const taskQueue = uniqueTaskQueue('cli-outage');
    const settings = loadSettings({
      ...stack.env,
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_TASK_QUEUE: taskQueue,
      SAPI_URL: env.emulator.url,
      SAPI_TOKEN: env.emulator.token,
    });
    const worker = await startWorker({ settings, worker: { workflowBundle: { code: readFileSync(stack.workflowBundlePath, 'utf8') } } });
    const connection = await Connection.connect({ address: temporal.address });
    try {
      // the job runs until Temporal is back
      env.emulator.faults.holdJob({ operationName: 'tableCreate', times: 1 });
      const source = join(env.dataDir, 'cli-outage.csv');
      writeFileSync(source, rowsCsv(100));
      const workflowId = `cli-outage-${Date.now()}`;
      const { output, exited } = startCli(temporal, [
        'import',
        source,
        '--bucket',
        'in.c-cli-outage',
        '--create-bucket',
        '--table',
        't',
        '--workflow-id',
        workflowId,
        '--task-queue',
        taskQueue,
        '--json',
      ]);

      const handle = new Client({ connection }).workflow.getHandle(workflowId);
      await eventually(
        async () => (await handle.query<TransferProgress>('progress').catch(() => undefined))?.phase === 'importing',
        60_000,
        `the import never reached the Storage job; CLI stderr: ${output.stderr}`,
      );
      await temporal.process.kill();
      const killedAt = Date.now();
      // the CLI sees the outage; Temporal stays down OUTAGE_MS in all, past the client's own retries (the outage's
      // length, not a check: that the CLI did not give up meanwhile shows in its exit code and result below)
      await eventually(() => output.stderr.includes('Temporal unreachable'), 60_000, `the CLI never said Temporal is unreachable; stderr: ${output.stderr}`);
      await new Promise((r) => setTimeout(r, Math.max(0, killedAt + OUTAGE_MS - Date.now())));
      temporal = await restartTemporal(temporal, { dataDir, headless: true });
      env.emulator.faults.releaseJobs('tableCreate');

      const code = await exited;
      expect({ code, stderr: output.stderr }).toMatchObject({ code: 0 });
      expect(output.stdout.trimEnd().split('\n')).toHaveLength(1);
      expect(JSON.parse(output.stdout)).toMatchObject({ workflowId, tableId: 'in.c-cli-outage.t', importedRowsCount: 100 });
      expect(output.stderr).toContain(`started workflow ${workflowId}`);
      expect(output.stderr).toContain(`Temporal unreachable, retrying… (workflow ${workflowId} keeps running on the server)`);
      expect(output.stderr.match(/Temporal unreachable/g)).toHaveLength(1);
      const table = await env.emulator.readTable('in.c-cli-outage.t');
      expect(table.rows).toHaveLength(100);
      expect(new Set(table.rows.map((row) => row[0])).size).toBe(100);
      const creates = env.emulator.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/buckets/in.c-cli-outage/tables-async'));
      expect(creates).toHaveLength(1);
    } finally {
      await connection.close().catch(() => undefined);
      await worker.stop().catch(() => undefined);
      await temporal.stop();
    }
  });

  it('gives up after --reconnect-timeout with exit code 3 and says the workflow may still run; `status` then finds it running', async () => {
    const dataDir = join(env.dataDir, 'own-temporal-gone');
    let temporal: TemporalHandle = await startTemporal({ dataDir, headless: true });
    try {
      const workflowId = `cli-gone-${Date.now()}`;
      // no worker polls this queue: the workflow waits for one, as long as it takes (--no-worker-check: start it anyway)
      const {
        child: cli,
        output,
        exited,
      } = startCli(temporal, [
        'import',
        join(env.dataDir, 'never-read.csv'),
        '--bucket',
        'in.c-gone',
        '--table',
        't',
        '--workflow-id',
        workflowId,
        '--task-queue',
        uniqueTaskQueue('nobody'),
        '--reconnect-timeout',
        '5s',
        '--no-worker-check',
      ]);
      await eventually(
        () => output.stderr.includes(`started workflow ${workflowId}`) || cli.exitCode !== null,
        60_000,
        `the CLI did not start the workflow: ${output.stderr}`,
      );
      await temporal.process.kill();
      const code = await exited;
      expect(output.stdout).toBe('');
      const lines = output.stderr.trimEnd().split('\n');
      expect(lines).toContain(`import: Temporal unreachable, retrying… (workflow ${workflowId} keeps running on the server)`);
      // the whole stderr on failure (a crash ends with Node's version line, not the message)
      expect(`${lines.at(-1)}\n--- stderr:\n${output.stderr}`).toMatch(
        new RegExp(
          `^sapi-temporal: import lost contact \\[SAPI_CLI_TEMPORAL_LOST_CONTACT\\] Temporal at ${temporal.address} unreachable for [\\d.]+ s \\(--reconnect-timeout\\); workflow ${workflowId} may still be running on the server: re-attach with \`sapi-temporal wait ${workflowId}\``,
        ),
      );
      expect(code).toBe(3);

      temporal = await restartTemporal(temporal, { dataDir, headless: true });
      const status = startCli(temporal, ['status', workflowId, '--json']);
      expect(await status.exited).toBe(0);
      expect(JSON.parse(status.output.stdout)).toMatchObject({ workflowId, type: 'importTableWorkflow', status: 'running' });
    } finally {
      await temporal.stop();
    }
  });
});
