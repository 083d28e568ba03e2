import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { loadSettings, loadTemporalConnection, temporalConnectionOptions } from '../../../src/config';
import { startWorker, type RunningWorker } from '../../../src/worker';
import { testStack, uniqueTaskQueue } from '../../harness/stack-state';
import { makeTestCertificates, type TestCertificates } from '../../harness/tls-certs';
import { startTlsProxy, type TlsProxy } from '../../harness/tls-proxy';

const repoRoot = resolve(__dirname, '..', '..', '..');

interface CliOutcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

describe('Temporal through TLS and mTLS endpoints (envconfig settings)', () => {
  const stack = testStack();
  let dir: string;
  let certs: TestCertificates;
  let tls: TlsProxy;
  let mtls: TlsProxy;
  const workers: RunningWorker[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(stack.dataDir, 'temporal-tls-'));
    certs = makeTestCertificates(join(dir, 'certs'));
    tls = await startTlsProxy({ target: stack.temporalAddress, cert: certs.serverCert, key: certs.serverKey });
    mtls = await startTlsProxy({ target: stack.temporalAddress, cert: certs.serverCert, key: certs.serverKey, clientCa: certs.caCert });
  });

  afterAll(async () => {
    for (const worker of workers) await worker.stop();
    await tls?.close();
    await mtls?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The Temporal variables of a connection to `proxy`, the namespace of the shared stack. */
  function tlsEnv(proxy: TlsProxy, clientCert: boolean): Record<string, string> {
    return {
      TEMPORAL_ADDRESS: proxy.address,
      TEMPORAL_NAMESPACE: stack.namespace,
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: certs.caCert,
      ...(clientCert ? { TEMPORAL_TLS_CLIENT_CERT_PATH: certs.clientCert, TEMPORAL_TLS_CLIENT_KEY_PATH: certs.clientKey } : {}),
    };
  }

  /** `startWorker` (the plugin's own worker) with settings read from `env`, polling a fresh queue with the test workflows. */
  async function workerThrough(env: Record<string, string>, queuePrefix: string): Promise<string> {
    const taskQueue = uniqueTaskQueue(queuePrefix);
    const settings = loadSettings({ ...env, TEMPORAL_TASK_QUEUE: taskQueue, SAPI_URL: 'http://127.0.0.1:1', SAPI_TOKEN: 'unused' });
    const worker = await startWorker({
      settings,
      checkConnections: false,
      hostQueue: false,
      worker: { workflowBundle: { code: readFileSync(stack.workflowBundlePath, 'utf8') } },
    });
    workers.push(worker);
    return taskQueue;
  }

  /** Runs a short timer workflow on `taskQueue` with a client connected as `env` says; resolves its workflow id. */
  async function runWorkflow(env: Record<string, string>, taskQueue: string): Promise<string> {
    const options = temporalConnectionOptions(loadTemporalConnection(env));
    const connection = await Connection.connect(options.client);
    try {
      const client = new Client({ connection, namespace: options.namespace });
      const workflowId = `tls-${taskQueue}`;
      const result = await client.workflow.execute('durableTimerWorkflow', { taskQueue, workflowId, args: [{ sleepMs: 10 }] });
      expect(result).toMatchObject({ sleptMs: 10 });
      return workflowId;
    } finally {
      await connection.close();
    }
  }

  /** Runs `bin/sapi-temporal` with only `env`'s Temporal variables (no user config file: HOME points at the temp dir). */
  function cli(args: string[], env: Record<string, string>): Promise<CliOutcome> {
    const child = spawn(process.execPath, ['-r', resolve(repoRoot, 'scripts', 'ts-register.js'), resolve(repoRoot, 'bin', 'sapi-temporal.js'), '--', ...args], {
      cwd: dir,
      env: { PATH: process.env.PATH, HOME: dir, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const output = { stdout: '', stderr: '' };
    child.stdout.on('data', (chunk: Buffer) => (output.stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output.stderr += chunk.toString()));
    return new Promise((ok, fail) => {
      child.once('error', fail);
      // stderr as is: grpc-js sends the IP address as TLS server name, and Node's DEP0123 warning must not show
      child.once('close', (code) => ok({ code, stdout: output.stdout, stderr: output.stderr }));
    });
  }

  it('runs a workflow on startWorker and shows it with `sapi-temporal status` through a TLS endpoint trusted by its CA', async () => {
    const env = tlsEnv(tls, false);
    const taskQueue = await workerThrough(env, 'tls');
    const workflowId = await runWorkflow(env, taskQueue);
    const status = await cli(['status', workflowId, '--json'], env);
    expect(status).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(status.stdout)).toMatchObject({ workflowId, status: 'completed' });
  });

  it('refuses a TLS endpoint whose certificate the configured CA did not sign, saying how the connection was secured', async () => {
    const status = await cli(['status', 'any-id'], { ...tlsEnv(tls, false), TEMPORAL_TLS_SERVER_CA_CERT_PATH: certs.otherCaCert });
    expect(status.code).not.toBe(0);
    expect(status.stderr).toContain(`cannot reach Temporal at ${tls.address} (TLS)`);
    expect(status.stderr).toContain('TEMPORAL_TLS_SERVER_CA_CERT_PATH');
  });

  it('runs a workflow and shows its status through an mTLS endpoint with the client certificate and key', async () => {
    const env = tlsEnv(mtls, true);
    const taskQueue = await workerThrough(env, 'mtls');
    const workflowId = await runWorkflow(env, taskQueue);
    const status = await cli(['status', workflowId, '--json'], env);
    expect(status).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(status.stdout)).toMatchObject({ workflowId, status: 'completed' });
  });

  it('is refused by the mTLS endpoint without a client certificate: the worker does not start and the CLI says why', async () => {
    const env = tlsEnv(mtls, false);
    const refusedBefore = mtls.refusedHandshakes;
    await expect(workerThrough(env, 'mtls-no-cert')).rejects.toThrow();
    const status = await cli(['status', 'any-id'], env);
    expect(status.code).not.toBe(0);
    expect(status.stderr).toContain(`cannot reach Temporal at ${mtls.address} (TLS)`);
    expect(status.stderr).toContain('TEMPORAL_TLS_CLIENT_CERT_PATH/_KEY_PATH (mTLS)');
    expect(mtls.refusedHandshakes).toBeGreaterThan(refusedBefore);
  });

  it('honours a profile of a TOML config file (TEMPORAL_CONFIG_FILE + TEMPORAL_PROFILE) for the worker and the CLI', async () => {
    const configFile = join(dir, 'temporal.toml');
    writeFileSync(
      configFile,
      [
        '[profile.default]',
        'address = "127.0.0.1:1"',
        '[profile.secured]',
        `address = "${mtls.address}"`,
        `namespace = "${stack.namespace}"`,
        '[profile.secured.tls]',
        `server_ca_cert_path = "${certs.caCert}"`,
        `client_cert_path = "${certs.clientCert}"`,
        `client_key_path = "${certs.clientKey}"`,
      ].join('\n'),
    );
    const env = { TEMPORAL_CONFIG_FILE: configFile, TEMPORAL_PROFILE: 'secured' };
    const taskQueue = await workerThrough(env, 'profile');
    const workflowId = await runWorkflow(env, taskQueue);
    const status = await cli(['status', workflowId, '--json'], env);
    expect(status).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(status.stdout)).toMatchObject({ workflowId, status: 'completed' });
    // the file's default profile is used when none is named, and the --address flag wins over the profile
    const flagged = await cli(['status', workflowId, '--json', '--address', mtls.address], { TEMPORAL_CONFIG_FILE: configFile });
    expect(flagged.code).not.toBe(0);
    expect(flagged.stderr).toContain(`cannot reach Temporal at ${mtls.address} (plain text)`);
  });
});
