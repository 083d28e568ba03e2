import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { emulatorService } from '../../../src/dev/services';
import { startDevStack } from '../../../src/dev/stack';
import { temporalHealthy } from '../../../src/dev/temporal';
import { eventually, isAlive, spawnTs, waitForLine } from '../../harness/processes';

describe('dev stack', () => {
  let dataDir: string;
  beforeEach(() => (dataDir = mkdtempSync(join(tmpdir(), 'sapi-devstack-'))));
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('starts Temporal and MinIO on free ports, publishes their addresses, and stops both cleanly', async () => {
    const stack = await startDevStack({ dataDir, headless: true });
    const pids = [stack.temporal.process.pid, stack.minio.process.pid];
    try {
      expect(await temporalHealthy(stack.temporal.httpApiUrl, 'default')).toBe(true);
      const ready = await request(`${stack.env.AWS_ENDPOINT_URL_S3}/minio/health/ready`);
      await ready.body.dump();
      expect(ready.statusCode).toBe(200);
      expect(stack.env).toMatchObject({ TEMPORAL_NAMESPACE: 'default', TEMPORAL_TASK_QUEUE: 'sapi-temporal', AWS_REGION: 'us-east-1' });
      const envFile = join(dataDir, 'stack.env');
      stack.writeEnvFile(envFile);
      expect(readFileSync(envFile, 'utf8')).toContain(`TEMPORAL_ADDRESS=${stack.env.TEMPORAL_ADDRESS}\n`);
    } finally {
      await stack.stop();
    }
    expect(pids.filter(isAlive)).toEqual([]);
  });

  it('runs the emulator with a generated admin secret, written to the env file and required by /_emulator/*', async () => {
    const stack = await startDevStack({ dataDir, headless: true, services: [emulatorService()] });
    try {
      const secret = stack.env.SAPI_EMULATOR_ADMIN_TOKEN;
      expect(secret).toMatch(/^dev-admin-[0-9a-f]{32}$/);
      const envFile = join(dataDir, 'stack.env');
      stack.writeEnvFile(envFile);
      expect(readFileSync(envFile, 'utf8')).toContain(`SAPI_EMULATOR_ADMIN_TOKEN=${secret}\n`);
      const faults = async (headers: Record<string, string>) => {
        const res = await request(`${stack.env.SAPI_URL}/_emulator/faults`, { headers });
        await res.body.dump();
        return res.statusCode;
      };
      expect(await faults({})).toBe(401);
      expect(await faults({ authorization: `Bearer ${stack.env.SAPI_TOKEN}` })).toBe(401);
      expect(await faults({ authorization: `Bearer ${secret}` })).toBe(200);
    } finally {
      await stack.stop();
    }
  });

  it('runs the emulator in a process of its own and starts it again, on the same address with its data, when it dies', async () => {
    const stack = await startDevStack({ dataDir, headless: true, services: [emulatorService()] });
    try {
      const others = new Set([stack.temporal.process.pid, stack.minio.process.pid]);
      const emulatorPids = () =>
        readFileSync(join(dataDir, 'stack.pids'), 'utf8')
          .split('\n')
          .filter(Boolean)
          .map(Number)
          .filter((pid) => !others.has(pid));
      const [first] = emulatorPids();
      expect(first).not.toBe(process.pid);
      const api = async (method: 'GET' | 'POST', path: string, body?: unknown) => {
        const res = await request(`${stack.env.SAPI_URL}/v2/storage${path}`, {
          method,
          headers: { 'x-storageapi-token': stack.env.SAPI_TOKEN!, ...(body ? { 'content-type': 'application/json' } : {}) },
          body: body ? JSON.stringify(body) : undefined,
        });
        return { status: res.statusCode, body: (await res.body.json()) as { id: string }[] & { id: string } };
      };
      expect((await api('POST', '/buckets', { name: 'kept', stage: 'in' })).status).toBe(201);

      process.kill(first!, 'SIGKILL'); // as the OOM killer would
      await eventually(() => emulatorPids().some((pid) => pid !== first && isAlive(pid)), 60_000, 'the emulator was not started again');
      await eventually(
        async () => (await api('GET', '/buckets').catch(() => ({ status: 0 }))).status === 200,
        30_000,
        'the emulator does not answer after its restart',
      );
      expect((await api('GET', '/buckets')).body.map((b) => b.id)).toContain('in.c-kept');
      const log = () => readFileSync(join(dataDir, 'emulator.log'), 'utf8');
      await eventually(() => /emulator restarted \(pid \d+, restart 1\)/.test(log()), 10_000, `no restart logged: ${log()}`);
      expect(log()).toContain(
        `emulator (pid ${first}) exited with signal SIGKILL; restarting it on ${stack.env.SAPI_URL} (same data folder, unfinished jobs resume)`,
      );
    } finally {
      await stack.stop();
    }
  });

  it('leaves no orphan processes when the caller is killed without stopping the stack', async () => {
    const caller = spawnTs('test/harness/stack-child.ts', [dataDir]);
    const [, temporalPid, minioPid] = await waitForLine(caller, /^PIDS (\d+) (\d+)$/, 120_000);
    const pids = [Number(temporalPid), Number(minioPid)];
    expect(pids.every(isAlive)).toBe(true);
    caller.kill('SIGKILL');
    await eventually(() => !pids.some(isAlive), 20_000, `orphans still running: ${pids.filter(isAlive)}`);
  });
});
