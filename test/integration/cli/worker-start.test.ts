import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { resolve } from 'node:path';
import type { ImportTableResult } from '../../../src/contracts/transfer';
import { repoRoot, waitForLine } from '../../harness/processes';
import { makeTestCertificates, type TestCertificates } from '../../harness/tls-certs';
import { startTlsProxy, type TlsProxy } from '../../harness/tls-proxy';
import { startSapiTestEnv, type SapiTestEnv } from '../../harness/sapi-env';
import { testStack, uniqueTaskQueue } from '../../harness/stack-state';

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * A worker that cannot work exits on its own, naming the cause (the bound is 15 s). Not asserted as a time
 * (a loaded machine is no measure): a worker still running after this long is killed, so a hang fails the test on its
 * exit code rather than hanging jest (ms).
 */
const HANG_MS = 60_000;

/** Two ways to run a worker: the CLI's `worker`, and a user's own worker with the plugin (the README's snippet). */
const WORKERS = {
  'the CLI worker': ['bin/sapi-temporal.js', '--', 'worker'],
  "the plugin in a user's own worker": ['test/harness/own-worker.ts'],
} as const;
/** `startWorker` (what the CLI worker runs) in the tests' worker process, with SAPI_TEST_WORKFLOWS_PATH. */
const HARNESS_WORKER = ['test/harness/worker-child.ts'];

describe('a worker that cannot work exits at start, naming the setting', () => {
  const stack = testStack();
  let env: SapiTestEnv;
  let certs: TestCertificates;
  let tls: TlsProxy;
  let mtls: TlsProxy;
  beforeAll(async () => {
    env = await startSapiTestEnv('worker-start', { worker: false });
    // Temporal behind TLS, and behind TLS that wants a client certificate (mTLS)
    certs = makeTestCertificates(env.dataDir);
    tls = await startTlsProxy({ target: stack.temporalAddress, cert: certs.serverCert, key: certs.serverKey });
    mtls = await startTlsProxy({ target: stack.temporalAddress, cert: certs.serverCert, key: certs.serverKey, clientCa: certs.caCert });
  });
  afterAll(async () => {
    await tls?.close();
    await mtls?.close();
    await env?.stop();
  });

  /** Starts a worker process with the stack's Temporal, this env's Storage connection, and `overrides` on top. */
  function startWorkerProcess(kind: keyof typeof WORKERS | 'the harness worker', overrides: Record<string, string | undefined>) {
    const args = kind === 'the harness worker' ? HARNESS_WORKER : WORKERS[kind];
    const child = spawn(
      process.execPath,
      ['-r', resolve(repoRoot, 'scripts', 'ts-register.js'), ...args.map((arg) => (arg.includes('/') ? resolve(repoRoot, arg) : arg))],
      {
        cwd: env.dataDir,
        env: {
          ...process.env,
          ...stack.env,
          TEMPORAL_TASK_QUEUE: uniqueTaskQueue('worker-start'),
          SAPI_URL: env.emulator.url,
          SAPI_TOKEN: env.emulator.token,
          SAPI_WORK_DIR: resolve(env.dataDir, 'work'),
          SAPI_TEST_WORKFLOW_BUNDLE: stack.workflowBundlePath,
          ...overrides,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const output = { stdout: '', stderr: '' };
    child.stdout.on('data', (chunk: Buffer) => (output.stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output.stderr += chunk.toString()));
    const exited = new Promise<Exit>((ok, fail) => {
      child.once('error', fail);
      child.once('close', (code, signal) => ok({ code, signal, ...output }));
    });
    return { child, output, exited };
  }

  /** Runs the worker until it exits on its own (killed after {@link HANG_MS}, so a hang fails the test, not jest). */
  async function runToExit(kind: keyof typeof WORKERS | 'the harness worker', overrides: Record<string, string | undefined>): Promise<Exit> {
    const worker = startWorkerProcess(kind, overrides);
    const guard = setTimeout(() => worker.child.kill('SIGKILL'), HANG_MS);
    try {
      return await worker.exited;
    } finally {
      clearTimeout(guard);
    }
  }

  /** The one line the worker printed about its failure (the CLI prefixes `sapi-temporal: worker failed [CODE] `). */
  const failureLine = (exit: Exit) =>
    exit.stderr
      .trim()
      .split('\n')
      .filter((line) => !/^\s*$/.test(line));

  describe.each(Object.keys(WORKERS) as Array<keyof typeof WORKERS>)('%s', (kind) => {
    it('exits 1 on its own when its namespace does not exist, naming TEMPORAL_NAMESPACE and the server', async () => {
      const exit = await runToExit(kind, { TEMPORAL_NAMESPACE: 'nope-no-such-namespace' });
      expect({ code: exit.code, lines: failureLine(exit) }).toEqual({
        code: 1,
        lines: [expect.stringContaining(`TEMPORAL_NAMESPACE "nope-no-such-namespace" does not exist on ${stack.temporalAddress}`)],
      });
    });

    it('exits 1 on its own when Temporal does not answer, saying it may be an outage or a wrong address', async () => {
      const exit = await runToExit(kind, { TEMPORAL_ADDRESS: '127.0.0.1:1' });
      expect({ code: exit.code, lines: failureLine(exit) }).toEqual({
        code: 1,
        lines: [
          expect.stringMatching(/TEMPORAL_ADDRESS 127\.0\.0\.1:1: unreachable \(a Temporal outage, or a wrong address\): connection refused at 127\.0\.0\.1:1/),
        ],
      });
    });

    it('exits 1 on its own when the Storage host does not exist, naming SAPI_URL', async () => {
      const exit = await runToExit(kind, { SAPI_URL: 'https://sapi.invalid' });
      expect({ code: exit.code, lines: failureLine(exit) }).toEqual({
        code: 1,
        lines: [expect.stringContaining('SAPI_URL https://sapi.invalid: host not found')],
      });
    });

    it('exits 1 on its own when nothing listens at the Storage URL, naming SAPI_URL', async () => {
      const exit = await runToExit(kind, { SAPI_URL: 'http://127.0.0.1:1' });
      expect({ code: exit.code, lines: failureLine(exit) }).toEqual({
        code: 1,
        lines: [expect.stringContaining('SAPI_URL http://127.0.0.1:1: connection refused')],
      });
    });

    it('exits 1 on its own without a Storage connection, naming SAPI_URL and SAPI_TOKEN', async () => {
      const exit = await runToExit(kind, { SAPI_URL: undefined, SAPI_TOKEN: undefined });
      expect({ code: exit.code, lines: failureLine(exit) }).toEqual({ code: 1, lines: [expect.stringContaining('SAPI_URL and SAPI_TOKEN are not set')] });
    });

    it('exits 1 on its own when the service rejects the token, naming SAPI_TOKEN', async () => {
      const exit = await runToExit(kind, { SAPI_TOKEN: 'not-a-valid-token' });
      expect({ code: exit.code, lines: failureLine(exit) }).toEqual({
        code: 1,
        lines: [expect.stringContaining(`SAPI_TOKEN is rejected by ${env.emulator.url}`)],
      });
    });

    it('exits 1 on a TLS fault naming TEMPORAL_ADDRESS, the fault and the setting that fixes it, as the CLI does (a CA that did not sign, another name, no client certificate)', async () => {
      const [wrongCa, wrongName, noClientCert] = await Promise.all([
        runToExit(kind, { TEMPORAL_ADDRESS: tls.address, TEMPORAL_TLS: undefined, TEMPORAL_TLS_SERVER_CA_CERT_PATH: certs.otherCaCert }),
        runToExit(kind, {
          TEMPORAL_ADDRESS: tls.address,
          TEMPORAL_TLS: undefined,
          TEMPORAL_TLS_SERVER_CA_CERT_PATH: certs.caCert,
          TEMPORAL_TLS_SERVER_NAME: 'temporal.example.com',
        }),
        runToExit(kind, { TEMPORAL_ADDRESS: mtls.address, TEMPORAL_TLS: undefined, TEMPORAL_TLS_SERVER_CA_CERT_PATH: certs.caCert }),
      ]);
      expect({ code: wrongCa.code, lines: failureLine(wrongCa) }).toEqual({
        code: 1,
        lines: [expect.stringContaining(`TEMPORAL_ADDRESS ${tls.address}: TLS: the server's certificate is not signed by a trusted CA`)],
      });
      expect(wrongCa.stderr).toContain(`the CA given (${certs.otherCaCert}) did not sign it`);
      expect({ code: wrongName.code, lines: failureLine(wrongName) }).toEqual({
        code: 1,
        lines: [expect.stringContaining(`TEMPORAL_ADDRESS ${tls.address}: TLS: the server's certificate is not for the name connected to`)],
      });
      expect({ code: noClientCert.code, lines: failureLine(noClientCert) }).toEqual({
        code: 1,
        lines: [
          expect.stringContaining(
            `TEMPORAL_ADDRESS ${mtls.address}: TLS: the server refused the handshake: it wants a client certificate (mTLS) and no client certificate was sent`,
          ),
        ],
      });
      for (const exit of [wrongCa, wrongName, noClientCert]) expect(exit.stderr).not.toMatch(/tonic|transport::Error|InvalidCertificate/);
    });

    it('exits 1 when its metrics port is taken (a second worker on the host), naming SAPI_METRICS_ADDRESS and the port in use', async () => {
      const taken = createServer();
      await new Promise<void>((ok) => taken.listen(0, '127.0.0.1', ok));
      try {
        const address = `127.0.0.1:${(taken.address() as AddressInfo).port}`;
        const exit = await runToExit(kind, { SAPI_METRICS_ADDRESS: address });
        expect({ code: exit.code, lines: failureLine(exit) }).toEqual({
          code: 1,
          lines: [expect.stringContaining(`SAPI_METRICS_ADDRESS ${address}: cannot serve metrics: the address is in use`)],
        });
        expect(exit.stderr).not.toContain('installed before');
      } finally {
        await new Promise<void>((ok) => taken.close(() => ok()));
      }
    });
  });

  it("a user's own worker from the README serves SAPI_METRICS_ADDRESS, logs SAPI_LOG_FORMAT=json, and prints neither webpack's stats nor the AWS SDK's Node notice", async () => {
    const port = await new Promise<number>((ok) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port: free } = probe.address() as AddressInfo;
        probe.close(() => ok(free));
      });
    });
    const worker = startWorkerProcess("the plugin in a user's own worker", {
      SAPI_METRICS_ADDRESS: `127.0.0.1:${port}`,
      SAPI_LOG_FORMAT: 'json',
      // bundles the plugin's workflows at start (`workflowsPath`), as the README's worker does
      SAPI_TEST_WORKFLOW_BUNDLE: undefined,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: undefined,
    });
    try {
      // READY on stdout, or the worker gone (the assertion below says which)
      await new Promise<void>((ok) => {
        const done = () => {
          worker.child.stdout?.off('data', check);
          worker.child.off('exit', done);
          ok();
        };
        const check = () => void (/READY/.test(worker.output.stdout) && done());
        worker.child.stdout?.on('data', check);
        worker.child.once('exit', done);
        check();
      });
      expect({ stdout: worker.output.stdout, stderr: worker.output.stderr }).toEqual({ stdout: 'READY\n', stderr: expect.any(String) });
      const metrics = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(metrics.status).toBe(200);
      expect(await metrics.text()).toMatch(/^temporal_/m);
      worker.child.kill('SIGTERM');
      const exit = await worker.exited;
      expect(exit.code).toBe(0);
      const lines = exit.stderr.split('\n').filter((line) => line !== '');
      expect(lines.length).toBeGreaterThan(0);
      const records = lines.map((line) => JSON.parse(line) as { message: string }); // every line JSON (throws otherwise)
      expect(records.filter((record) => /webpack|asset workflow-bundle|NodeVersionSupportWarning|AWS SDK/.test(record.message))).toEqual([]);
      expect(records.map((record) => record.message)).toContainEqual(expect.stringMatching(/^Workflow bundle created/));
    } finally {
      worker.child.kill('SIGKILL');
    }
  });

  it('the CLI worker bundles its workflows in a process that exits: at rest it has no bundler loaded (no swc binding mapped) and no child process', async () => {
    const worker = startWorkerProcess('the CLI worker', { TEMPORAL_TASK_QUEUE: uniqueTaskQueue('worker-bundle') });
    const polling = waitForLine(worker.child, /^worker polling /, HANG_MS);
    try {
      await polling;
      expect(worker.output.stdout).toMatch(/^worker polling /);
      const pid = worker.child.pid!;
      // the bundler compiles the workflows' TypeScript with swc, a native module: once loaded, mapped for the process's life
      expect(
        readFileSync(`/proc/${pid}/maps`, 'utf8')
          .split('\n')
          .filter((line) => /swc/.test(line)),
      ).toEqual([]);
      const children = readdirSync(`/proc/${pid}/task`).flatMap((task) =>
        readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean),
      );
      expect(children).toEqual([]);
      // the bundler's log line, from the child, in the worker's log; none of the SDK's warnings for a prebuilt bundle
      // given options it ignores (workflowsPath, bundlerOptions, workflow interceptor modules: all in the bundle)
      expect(worker.output.stderr).toMatch(/Workflow bundle created/);
      expect(worker.output.stderr).not.toMatch(/Ignoring WorkerOptions|prebuilt workflow bundle/);
    } finally {
      worker.child.kill('SIGKILL');
    }
  });

  it('a workflow module that does not bundle fails the start: exit 1, the failure naming the module and what webpack could not resolve', async () => {
    const workflows = resolve(repoRoot, 'test', 'harness', 'broken-workflows.js');
    const exit = await runToExit('the harness worker', { SAPI_TEST_WORKFLOW_BUNDLE: undefined, SAPI_TEST_WORKFLOWS_PATH: workflows });
    const failure = exit.stderr.split('\n').filter((line) => line.startsWith('worker-child: '));
    expect({ code: exit.code, failure }).toEqual({
      code: 1,
      failure: [expect.stringContaining(`bundling the workflows (${workflows}) failed: ERROR in `)],
    });
    expect(failure[0]).toMatch(/broken-workflows\.js 3:\d+-\d+; Module not found: Error: Can't resolve '\.\/no-such-workflow-module'/);
  });

  it('the CLI names the failure code of each cause: SAPI_TEMPORAL_NAMESPACE_NOT_FOUND, SAPI_WORKER_CONFIG', async () => {
    const [namespace, storage] = await Promise.all([
      runToExit('the CLI worker', { TEMPORAL_NAMESPACE: 'nope-code' }),
      runToExit('the CLI worker', { SAPI_URL: 'http://127.0.0.1:1' }),
    ]);
    expect(namespace.stderr).toMatch(/^sapi-temporal: worker failed \[SAPI_TEMPORAL_NAMESPACE_NOT_FOUND\] TEMPORAL_NAMESPACE "nope-code"/);
    expect(storage.stderr).toMatch(/^sapi-temporal: worker failed \[SAPI_WORKER_CONFIG\] SAPI_URL http:\/\/127\.0\.0\.1:1: /);
  });

  describe('stop signals', () => {
    let silent: Server;
    const sockets = new Set<Socket>();
    beforeAll(async () => {
      // a Storage URL that accepts connections and never answers: the worker's start check waits on it
      silent = createServer((socket) => (sockets.add(socket), socket.on('close', () => sockets.delete(socket))));
      await new Promise<void>((ok) => silent.listen(0, '127.0.0.1', ok));
    });
    afterAll(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((ok) => silent.close(() => ok()));
    });

    it('a SIGTERM while the CLI worker is still starting ends it at once (130), saying so', async () => {
      const address = silent.address() as { port: number };
      const worker = startWorkerProcess('the CLI worker', { SAPI_URL: `http://127.0.0.1:${address.port}` });
      // the check has connected: the worker is inside its start, waiting for an answer
      const deadline = Date.now() + 30_000;
      while (sockets.size === 0 && Date.now() < deadline) await new Promise((ok) => setTimeout(ok, 50));
      expect(sockets.size).toBeGreaterThan(0);
      worker.child.kill('SIGTERM');
      const exit = await worker.exited;
      // at once: still inside its start (the check's connection is open, never answered), not after the check gave up
      expect({ code: exit.code, signal: exit.signal, stderr: exit.stderr.trim().split('\n') }).toEqual({
        code: 130,
        signal: null,
        stderr: [expect.stringMatching(/\[INFO\] SIGTERM: stopped while starting/)],
      });
    });

    it('a polling CLI worker logs JSON only when asked: one INFO line per transfer start and end with rows, bytes, duration and ids, no bundler stats', async () => {
      const taskQueue = uniqueTaskQueue('worker-logs');
      const worker = startWorkerProcess('the CLI worker', { TEMPORAL_TASK_QUEUE: taskQueue, SAPI_LOG_FORMAT: 'json' });
      try {
        const deadline = Date.now() + 60_000;
        while (!/worker polling/.test(worker.output.stdout) && worker.child.exitCode === null && Date.now() < deadline)
          await new Promise((ok) => setTimeout(ok, 100));
        expect(worker.output.stdout).toMatch(/^worker polling /);
        const source = resolve(env.dataDir, 'logged.csv');
        writeFileSync(source, 'id\n1\n2\n3\n');
        const workflowId = `logged-import-${Date.now()}`;
        const result = (await env.client.workflow.execute('importTableWorkflow', {
          taskQueue,
          workflowId,
          args: [{ source, bucketId: 'in.c-logs', createBucket: true, table: 'logged', polling: { initialMs: 200 } }],
        })) as ImportTableResult;
        worker.child.kill('SIGTERM');
        const exit = await worker.exited;
        expect(exit.code).toBe(0);
        const lines = exit.stderr.split('\n').filter((line) => line !== '');
        const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>); // every line JSON (throws otherwise)
        expect(records.filter((record) => /webpack|asset workflow-bundle/.test(String(record.message)))).toEqual([]);
        const transfer = records.filter((record) => record.transfer === 'import' && record.workflowId === workflowId);
        expect(transfer).toEqual([
          expect.objectContaining({ level: 'INFO', message: 'import started [table=in.c-logs.logged]', table: 'in.c-logs.logged' }),
          expect.objectContaining({
            level: 'INFO',
            message: expect.stringMatching(/^import finished \[rows=3, bytes=\d+, tableId=in\.c-logs\.logged, fileId=\d+, jobId=\d+, durationMs=\d+\]$/),
            rows: 3,
            bytes: result.bytes,
            tableId: result.tableId,
            fileId: result.fileId,
            jobId: result.jobId,
            durationMs: expect.any(Number),
          }),
        ]);
      } finally {
        worker.child.kill('SIGKILL');
      }
    });

    it('a SIGINT stops a polling CLI worker gracefully (exit 0)', async () => {
      const worker = startWorkerProcess('the CLI worker', {});
      const deadline = Date.now() + 60_000;
      while (!/worker polling/.test(worker.output.stdout) && worker.child.exitCode === null && Date.now() < deadline)
        await new Promise((ok) => setTimeout(ok, 100));
      expect(worker.output.stdout).toMatch(/^worker polling /);
      worker.child.kill('SIGINT');
      const exit = await worker.exited;
      expect({ code: exit.code, stderr: exit.stderr }).toEqual({ code: 0, stderr: expect.stringContaining('SIGINT: stopping the worker') });
    });
  });
});
