// There is no Docker engine on the build machines: the compose file is validated by reading it.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { buildProgram } from '../../../src/cli';
import { loadSettings } from '../../../src/config';

const root = join(__dirname, '..', '..', '..');
interface Service {
  image?: string;
  build?: string;
  command?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
}
const compose = parse(readFileSync(join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as { services: Record<string, Service>; volumes: Record<string, unknown> };

describe('docker-compose.yml', () => {
  it('runs Temporal, MinIO, the emulator and a worker', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['emulator', 'minio', 'temporal', 'worker']);
  });

  it('pins every image to an explicit version and builds ours from the Dockerfile', () => {
    for (const [name, service] of Object.entries(compose.services)) {
      if (service.image) {
        expect(`${name}: ${service.image}`).toMatch(/:[^:]+$/);
        expect(service.image).not.toMatch(/:latest$/);
      } else expect(service.build).toBe('.');
    }
    expect(existsSync(join(root, 'Dockerfile'))).toBe(true);
    expect(readFileSync(join(root, 'Dockerfile'), 'utf8')).toMatch(/^FROM node:20\.\d+/m);
    // the lock lacks other platforms' optional binaries, which `npm ci` refuses (checked: npm ci fails on this lock)
    expect(readFileSync(join(root, 'Dockerfile'), 'utf8')).not.toMatch(/^RUN .*npm ci\b/m);
  });

  it('starts our services with CLI commands that exist', () => {
    const commands = buildProgram().commands.map((command) => command.name());
    for (const name of ['emulator', 'worker']) expect(commands).toContain(compose.services[name]!.command![0]);
  });

  it('wires the worker to Temporal, the emulator and MinIO by service name, with a valid configuration', () => {
    const worker = compose.services.worker!;
    const emulator = compose.services.emulator!;
    const settings = loadSettings(worker.environment);
    expect(settings.temporal.address).toBe('temporal:7233');
    expect(settings.connections.default!.url).toBe(`http://emulator:${emulator.command![emulator.command!.indexOf('--port') + 1]}`);
    expect(settings.connections.default!.token).toBe(emulator.command![emulator.command!.indexOf('--token') + 1]);
    expect(settings.s3.endpoint).toBe('http://minio:9000');
    expect(emulator.environment!.AWS_ACCESS_KEY_ID).toBe(compose.services.minio!.environment!.MINIO_ROOT_USER);
    expect(emulator.environment!.AWS_SECRET_ACCESS_KEY).toBe(compose.services.minio!.environment!.MINIO_ROOT_PASSWORD);
    expect(Object.keys(worker.depends_on!)).toEqual(expect.arrayContaining(['temporal', 'emulator']));
  });

  it('gives Temporal and MinIO health checks the dependants wait for', () => {
    expect(compose.services.temporal!.healthcheck).toBeDefined();
    expect(compose.services.minio!.healthcheck).toBeDefined();
    expect(compose.services.emulator!.depends_on!.minio!.condition).toBe('service_healthy');
  });
});
