import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { eventually, repoRoot } from '../../harness/processes';
import { startSapiTestEnv, type SapiTestEnv } from '../../harness/sapi-env';
import { testStack, uniqueTaskQueue } from '../../harness/stack-state';

interface CliOutcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTERS = /[\u0000-\u0009\u000b-\u001f\u007f]/;

describe('the CLI never hangs silently', () => {
  const stack = testStack();
  let env: SapiTestEnv;
  let workDir: string;
  beforeAll(async () => {
    env = await startSapiTestEnv('cli-feedback');
    workDir = mkdtempSync(join(env.dataDir, 'cwd-'));
  });
  afterAll(() => env?.stop());

  /** Runs `bin/sapi-temporal` as a child process with pipes (not a TTY), from `workDir`; only the Temporal variables set. */
  function cli(args: string[]): Promise<CliOutcome> {
    const child = spawn(process.execPath, ['-r', resolve(repoRoot, 'scripts', 'ts-register.js'), resolve(repoRoot, 'bin', 'sapi-temporal.js'), '--', ...args], {
      cwd: workDir,
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: stack.temporalAddress,
        TEMPORAL_NAMESPACE: stack.namespace,
        TEMPORAL_TASK_QUEUE: undefined,
        SAPI_URL: undefined,
        SAPI_TOKEN: undefined,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const output = { stdout: '', stderr: '' };
    child.stdout.on('data', (chunk: Buffer) => (output.stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output.stderr += chunk.toString()));
    return new Promise((ok, fail) => {
      child.once('error', fail);
      child.once('close', (code) => ok({ code, ...output }));
    });
  }

  function csvFile(name: string, content: string): string {
    writeFileSync(join(workDir, name), content);
    return name;
  }

  it('fails after its short wait (5 s) when no worker polls the task queue, naming the queue and `sapi-temporal worker`, and starts nothing', async () => {
    const queue = uniqueTaskQueue('nobody-polls');
    const workflowId = `cli-no-worker-${Date.now()}`;
    const outcome = await cli([
      'import',
      csvFile('lonely.csv', 'id\n1\n'),
      '--bucket',
      'in.c-feedback',
      '--table',
      'lonely',
      '--task-queue',
      queue,
      '--workflow-id',
      workflowId,
    ]);
    expect(outcome).toMatchObject({ code: 1, stdout: '' });
    expect(outcome.stderr).toContain(`no worker polls task queue ${queue} yet; waiting up to 5 s`);
    expect(outcome.stderr).toMatch(
      new RegExp(
        `^sapi-temporal: import failed \\[SAPI_CLI_NO_WORKER\\] no worker polls task queue ${queue} in namespace ${stack.namespace} .*nothing was started\\. Start one: \`sapi-temporal worker --task-queue ${queue} --namespace ${stack.namespace} --address ${stack.temporalAddress.replace(/[.]/g, '\\.')}\``,
        'm',
      ),
    );
    expect(outcome.stderr).not.toContain('started workflow');
    const status = await cli(['status', workflowId]);
    expect(status.code).toBe(1);
    expect(status.stderr).toContain('[SAPI_CLI_WORKFLOW_NOT_FOUND]');
  });

  it('with --json, prints the failure as one JSON object on stdout with the same exit code', async () => {
    const queue = uniqueTaskQueue('nobody-polls-json');
    const outcome = await cli([
      'import',
      csvFile('lonely-json.csv', 'id\n1\n'),
      '--bucket',
      'in.c-feedback',
      '--table',
      'lonely',
      '--task-queue',
      queue,
      '--workflow-id',
      `cli-no-worker-json-${Date.now()}`,
      '--json',
    ]);
    expect(outcome.code).toBe(1);
    expect(outcome.stdout.trimEnd().split('\n')).toHaveLength(1);
    const { error } = JSON.parse(outcome.stdout) as { error: Record<string, unknown> };
    expect(error).toEqual({ code: 'SAPI_CLI_NO_WORKER', message: expect.stringContaining(`no worker polls task queue ${queue}`), exitCode: 1 });

    const unknown = await cli(['wait', 'no-such-workflow', '--json']);
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stdout)).toEqual({
      error: { code: 'SAPI_CLI_WORKFLOW_NOT_FOUND', message: expect.stringContaining('no workflow no-such-workflow'), exitCode: 1 },
    });
  });

  it('returns at once with --detach, printing the workflow id, and the run completes on its own (seen with `status`)', async () => {
    const workflowId = `cli-detach-${Date.now()}`;
    // the job runs until `status` has shown the run running
    env.emulator.faults.holdJob({ operationName: 'tableCreate', times: 1 });
    const outcome = await cli([
      'import',
      csvFile('detached.csv', 'id,v\n1,a\n2,b\n'),
      '--bucket',
      'in.c-feedback',
      '--create-bucket',
      '--table',
      'detached',
      '--task-queue',
      env.taskQueue,
      '--workflow-id',
      workflowId,
      '--detach',
    ]);
    expect(outcome).toMatchObject({ code: 0, stdout: `${workflowId}\n` });
    expect(outcome.stderr).toMatch(new RegExp(`^import: started workflow ${workflowId} \\(run [\\w-]+\\); to re-attach: sapi-temporal wait ${workflowId}\n$`));
    const running = await cli(['status', workflowId, '--json']);
    expect(JSON.parse(running.stdout)).toMatchObject({ workflowId, status: 'running' });
    env.emulator.faults.releaseJobs('tableCreate');
    await eventually(
      async () => (JSON.parse((await cli(['status', workflowId, '--json'])).stdout) as { status: string }).status === 'completed',
      60_000,
      'the detached import never completed',
    );
    expect((await env.emulator.readTable('in.c-feedback.detached')).rows).toEqual([
      ['1', 'a'],
      ['2', 'b'],
    ]);

    const json = await cli([
      'import',
      csvFile('detached-json.csv', 'id\n1\n'),
      '--bucket',
      'in.c-feedback',
      '--table',
      'detached_json',
      '--task-queue',
      env.taskQueue,
      '--detach',
      '--json',
    ]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({
      workflowId: expect.stringMatching(/^import-in\.c-feedback\.detached_json-/),
      runId: expect.any(String),
      taskQueue: env.taskQueue,
    });
  });

  it('writes plain progress lines without control characters when stderr is not a terminal', async () => {
    const outcome = await cli([
      'import',
      csvFile('plain.csv', 'id,v\n1,a\n'),
      '--bucket',
      'in.c-feedback',
      '--create-bucket',
      '--table',
      'plain',
      '--task-queue',
      env.taskQueue,
      '--workflow-id',
      `cli-plain-${Date.now()}`,
    ]);
    expect(outcome.code).toBe(0);
    expect(outcome.stderr).not.toMatch(CONTROL_CHARACTERS);
    const lines = outcome.stderr.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^import: started workflow cli-plain-/);
    for (const line of lines.slice(1)) expect(line).toMatch(/^import: [a-z]+(, .+)?$/);
    expect(lines.at(-1)).toMatch(/^import: done, .*job \d+ success$/);
    // one line per change of phase or of the Storage job's status: none is repeated for a small file (a phase can
    // show twice when the poll sees its job waiting, then processing)
    // (a phase longer than 15 s repeats its line with the time spent in it: not a change of stage)
    const stages = lines
      .slice(1)
      .filter((line) => !/ in this phase\)$/.test(line))
      .map((line) => `${/^import: (\w+)/.exec(line)?.[1]} ${/job \d+ (\w+)/.exec(line)?.[1] ?? ''}`);
    expect(new Set(stages).size).toBe(stages.length);
  });

  it('shows the attempt number and the last failure of a step Temporal retries, in plain output', async () => {
    env.emulator.faults.add({ method: 'POST', path: 'files/prepare$', times: 3, action: { type: 'status', status: 500 } });
    const outcome = await cli([
      'import',
      csvFile('retried.csv', 'id\n1\n'),
      '--bucket',
      'in.c-feedback',
      '--create-bucket',
      '--table',
      'retried',
      '--task-queue',
      env.taskQueue,
    ]);
    expect({ code: outcome.code, stderr: outcome.stderr }).toMatchObject({ code: 0 });
    expect(outcome.stderr).toMatch(/^import: retrying \w+, attempt [2-4], last failure: \[SAPI_[A-Z_]+\] .*500/m);
    expect(outcome.stderr).not.toMatch(CONTROL_CHARACTERS);
    expect((await env.emulator.readTable('in.c-feedback.retried')).rows).toEqual([['1']]);
  });

  it('prints the package version', async () => {
    const { version } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string };
    expect(await cli(['--version'])).toMatchObject({ code: 0, stdout: `${version}\n`, stderr: '' });
  });
});
