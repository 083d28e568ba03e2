import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { eventually, repoRoot } from '../../harness/processes';
import { startSapiTestEnv, type SapiTestEnv } from '../../harness/sapi-env';
import { testStack, uniqueTaskQueue } from '../../harness/stack-state';
import { makeTestCertificates, type TestCertificates } from '../../harness/tls-certs';
import { startTlsProxy, type TlsProxy } from '../../harness/tls-proxy';
import { startWorker, type RunningWorker } from '../../../src/worker';
import { loadSettings } from '../../../src/config';

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node <script> …args` with only `env` (and PATH, HOME) set: no Temporal variable leaks in from the test's. */
function runNode(script: string[], env: Record<string, string>, cwd: string): Promise<Outcome> {
  const child = spawn(process.execPath, script, { cwd, env: { PATH: process.env.PATH, HOME: cwd, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const output = { stdout: '', stderr: '' };
  child.stdout.on('data', (chunk: Buffer) => (output.stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output.stderr += chunk.toString()));
  return new Promise((ok, fail) => {
    child.once('error', fail);
    child.once('close', (code) => ok({ code, ...output }));
  });
}

describe("the CLI's connection flags, output format and errors against the dev stack", () => {
  const stack = testStack();
  let env: SapiTestEnv;
  let dir: string;
  let certs: TestCertificates;
  let tls: TlsProxy;
  const workers: RunningWorker[] = [];

  beforeAll(async () => {
    env = await startSapiTestEnv('cli-connection');
    dir = mkdtempSync(join(env.dataDir, 'cwd-'));
    certs = makeTestCertificates(join(dir, 'certs'));
    tls = await startTlsProxy({ target: stack.temporalAddress, cert: certs.serverCert, key: certs.serverKey });
  });
  afterAll(async () => {
    for (const worker of workers) await worker.stop();
    await tls?.close();
    await env?.stop();
  });

  const cli = (args: string[], childEnv: Record<string, string> = {}) =>
    runNode(['-r', resolve(repoRoot, 'scripts', 'ts-register.js'), resolve(repoRoot, 'bin', 'sapi-temporal.js'), '--', ...args], childEnv, dir);
  const healthcheck = (childEnv: Record<string, string>) =>
    runNode([resolve(repoRoot, 'deploy', 'worker-healthcheck.js')], { SAPI_HEALTHCHECK_TIMEOUT_MS: '15000', ...childEnv }, dir);

  /** A finished import of a small file on this file's worker; resolves its workflow id. */
  async function finishedImport(table: string): Promise<string> {
    const source = join(dir, `${table}.csv`);
    writeFileSync(source, 'id,v\n1,a\n');
    const workflowId = `cli-conn-${table}-${Date.now()}`;
    await env.client.workflow.execute('importTableWorkflow', {
      taskQueue: env.taskQueue,
      workflowId,
      args: [{ source, bucketId: 'in.c-conn', createBucket: true, table }],
    });
    return workflowId;
  }

  it('reaches a TLS endpoint with --tls-ca-path, -n and -o json, and names the CA, the certificate name or the missing client certificate when they are wrong', async () => {
    const workflowId = await finishedImport('tls');
    const flags = ['--address', tls.address, '-n', stack.namespace];
    const ok = await cli(['status', workflowId, ...flags, '--tls-ca-path', certs.caCert, '-o', 'json']);
    expect(ok).toMatchObject({ code: 0, stderr: '' }); // no DEP0123 warning for the IP address either
    expect(JSON.parse(ok.stdout)).toMatchObject({ workflowId, status: 'completed' });

    const wrongCa = await cli(['status', workflowId, ...flags, '--tls-ca-path', certs.otherCaCert, '-o', 'json']);
    expect(wrongCa.code).toBe(1);
    expect(JSON.parse(wrongCa.stdout).error.code).toBe('SAPI_CLI_TEMPORAL_UNREACHABLE');
    expect(wrongCa.stderr).toContain(`cannot reach Temporal at ${tls.address} (TLS): TLS: the server's certificate is not signed by a trusted CA`);
    expect(wrongCa.stderr).toContain(`the CA given (${certs.otherCaCert}) did not sign it`);
    expect(wrongCa.stderr.trimEnd().split('\n')).toHaveLength(1);

    const wrongName = await cli(['status', workflowId, ...flags, '--tls-ca-path', certs.caCert, '--tls-server-name', 'temporal.example.com']);
    expect(wrongName.code).toBe(1);
    expect(wrongName.stderr).toContain("TLS: the server's certificate is not for the name connected to");
    expect(wrongName.stderr).toContain('temporal.example.com');
    // the same name accepted when host verification is off (the CA still checked)
    const unverified = await cli([
      'status',
      workflowId,
      ...flags,
      '--tls-ca-path',
      certs.caCert,
      '--tls-server-name',
      'temporal.example.com',
      '--tls-disable-host-verification',
      '--json',
    ]);
    expect(unverified).toMatchObject({ code: 0, stderr: '' });

    const mtls = await startTlsProxy({ target: stack.temporalAddress, cert: certs.serverCert, key: certs.serverKey, clientCa: certs.caCert });
    try {
      const noCert = await cli(['status', workflowId, '--address', mtls.address, '-n', stack.namespace, '--tls-ca-path', certs.caCert]);
      expect(noCert.code).toBe(1);
      expect(noCert.stderr).toContain('it wants a client certificate (mTLS) and no client certificate was sent');
      const withCert = await cli([
        'status',
        workflowId,
        '--address',
        mtls.address,
        '-n',
        stack.namespace,
        '--tls-ca-path',
        certs.caCert,
        '--tls-cert-path',
        certs.clientCert,
        '--tls-key-path',
        certs.clientKey,
        '-o',
        'json',
      ]);
      expect(withCert).toMatchObject({ code: 0, stderr: '' });
    } finally {
      await mtls.close();
    }
  });

  it("names a host that does not resolve, a refused port and a TLS endpoint given plain text at once, not after gRPC's 10 s deadline", async () => {
    const dns = await cli(['status', 'x', '--address', 'no-such-host.invalid:7233']);
    expect(dns.code).toBe(1);
    expect(dns.stderr).toContain('DNS: host no-such-host.invalid not found');
    const refused = await cli(['list', '--address', '127.0.0.1:1']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('connection refused at 127.0.0.1:1');
    const plain = await cli(['status', 'x', '--address', tls.address, '-n', stack.namespace]);
    expect(plain.code).toBe(1);
    expect(plain.stderr).toContain(
      `cannot reach Temporal at ${tls.address} (plain text): the server at ${tls.address} hangs up at once on plain text, as a TLS endpoint does`,
    );
    // the cause named by the CLI's own probe, not gRPC's deadline ending the call (how fast is the bench's business)
    for (const outcome of [dns, refused, plain]) expect(outcome.stderr).not.toMatch(/deadline/i);
  });

  it('gives a wrong namespace the same code from import and status', async () => {
    writeFileSync(join(dir, 'ns.csv'), 'id\n1\n');
    const imported = await cli([
      'import',
      'ns.csv',
      '--bucket',
      'in.c-conn',
      '--table',
      'ns',
      '--address',
      stack.temporalAddress,
      '-n',
      'no-such-namespace',
      '-o',
      'json',
    ]);
    const status = await cli(['status', 'x', '--address', stack.temporalAddress, '-n', 'no-such-namespace', '-o', 'json']);
    for (const outcome of [imported, status]) {
      expect(outcome.code).toBe(1);
      expect(JSON.parse(outcome.stdout).error).toMatchObject({ code: 'SAPI_TEMPORAL_NAMESPACE_NOT_FOUND' });
    }
  });

  it('prints schedule trigger, pause, unpause and delete as JSON with -o json', async () => {
    const scheduleId = `cli-conn-${Date.now()}`;
    const flags = ['--address', stack.temporalAddress, '-n', stack.namespace, '--task-queue', env.taskQueue];
    const created = await cli(['schedule', 'export', scheduleId, 'in.c-conn.tls', join(dir, 'out.csv'), '--every', '1h', '--paused', ...flags, '-o', 'json']);
    expect(created.code).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ scheduleId, paused: true });
    for (const [verb, action] of [
      ['unpause', 'unpaused'],
      ['pause', 'paused'],
      ['delete', 'deleted'],
    ] as const) {
      const outcome = await cli(['schedule', verb, scheduleId, ...flags, '-o', 'json']);
      expect(outcome).toMatchObject({ code: 0, stderr: '' });
      expect(JSON.parse(outcome.stdout)).toEqual({ scheduleId, action });
    }
    const gone = await cli(['schedule', 'trigger', scheduleId, ...flags, '--json']);
    expect(gone.code).toBe(1);
    expect(JSON.parse(gone.stdout).error.code).toBe('SAPI_CLI_SCHEDULE_NOT_FOUND');
  });

  it("prints the run's own duration from `wait` and `status` on an import that ended a while ago", async () => {
    const workflowId = await finishedImport('duration');
    const described = await env.client.workflow.getHandle(workflowId).describe();
    const tookMs = described.closeTime!.getTime() - described.startTime.getTime();
    // a while after its end: a duration counted up to now would be a second longer than the run's own
    await eventually(() => Date.now() >= described.closeTime!.getTime() + 1_000, 30_000, "the clock never passed the run's end");
    const flags = ['--address', stack.temporalAddress, '-n', stack.namespace];
    for (const verb of ['wait', 'status']) {
      const outcome = await cli([verb, workflowId, ...flags]);
      expect(outcome.code).toBe(0);
      const shown = /^ {2}duration +(\d+\.\d) s$/m.exec(outcome.stdout);
      expect(shown).not.toBeNull();
      expect(Math.abs(Number(shown![1]) * 1000 - tookMs)).toBeLessThanOrEqual(50); // one decimal of a second
    }
    expect(JSON.parse((await cli(['status', workflowId, ...flags, '-o', 'json'])).stdout).durationMs).toBe(tookMs);
  });

  it('finds a worker healthy through TLS with an API key, with the settings the worker itself uses', async () => {
    const taskQueue = uniqueTaskQueue('health-tls');
    const temporal = {
      TEMPORAL_ADDRESS: tls.address,
      TEMPORAL_NAMESPACE: stack.namespace,
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: certs.caCert,
      TEMPORAL_API_KEY: 'test-api-key',
      TEMPORAL_TASK_QUEUE: taskQueue,
    };
    const settings = loadSettings({ ...temporal, SAPI_URL: 'http://127.0.0.1:1', SAPI_TOKEN: 'unused' });
    workers.push(
      await startWorker({
        settings,
        checkConnections: false,
        hostQueue: false,
        worker: { workflowBundle: { code: readFileSync(stack.workflowBundlePath, 'utf8') } },
      }),
    );
    const healthy = await healthcheck({ ...temporal, SAPI_HEALTHCHECK_HOST: hostname() });
    expect(healthy.stderr).toBe('');
    expect(healthy).toMatchObject({ code: 0 });
    expect(healthy.stdout).toMatch(new RegExp(`^healthy: \\d+@${hostname().replace(/[.]/g, '\\.')} polling ${taskQueue}\n$`));
    // without the worker's TLS settings it cannot get in, and says how it tried
    const plain = await healthcheck({
      TEMPORAL_ADDRESS: tls.address,
      TEMPORAL_NAMESPACE: stack.namespace,
      TEMPORAL_TASK_QUEUE: taskQueue,
      SAPI_HEALTHCHECK_TIMEOUT_MS: '4000',
    });
    expect(plain.code).toBe(1);
    expect(plain.stderr).toMatch(/unhealthy/);
  });
});
