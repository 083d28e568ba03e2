// There is no Docker engine or Compose plugin on the build machines: the compose file is checked by reading it,
// against the Compose Specification's own JSON schema (vendored in test/fixtures/compose-spec) after the same
// variable interpolation Compose does, with the env files a user starts from.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Ajv from 'ajv';
import { parse } from 'yaml';
import { buildProgram } from '../../../src/cli/program';
import { loadSettings } from '../../../src/config';

const root = join(__dirname, '..', '..', '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');

interface Healthcheck {
  test?: string[] | string;
  disable?: boolean;
}
interface Service {
  image?: string;
  build?: string | { context: string; dockerfile?: string };
  command?: string[];
  entrypoint?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  volumes?: string[];
  profiles?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: Healthcheck;
  deploy?: { replicas?: number };
  container_name?: string;
  user?: string;
}
interface ComposeFile {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
}

/** Compose's interpolation: `$$`, `${VAR}`, `${VAR:-default}`, `${VAR-default}`, `${VAR:?error}`, `${VAR?error}`. */
function interpolate(text: string, env: Record<string, string>): string {
  const missing: string[] = [];
  const result = text.replace(/\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}/g, (match, name: string | undefined, op?: string, arg?: string) => {
    if (match === '$$') return '$';
    const value = env[name!];
    const unset = op?.startsWith(':') ? !value : value === undefined;
    if (!op) return value ?? '';
    if (op.endsWith('-')) return unset ? arg! : value!;
    if (unset) missing.push(`${name}: ${arg}`);
    return value ?? '';
  });
  if (missing.length > 0) throw new Error(`required variables missing: ${[...new Set(missing)].join('; ')}`);
  return result;
}

function envFile(path: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of read(path).split('\n')) {
    const match = line.match(/^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/);
    if (match) env[match[1]!] = match[2]!;
  }
  return env;
}

const raw = read('docker-compose.yml');
const load = (env: Record<string, string>) => parse(interpolate(raw, env), { merge: true }) as ComposeFile;
const devEnv = envFile('deploy/dev.env');
// deploy/example.env with its blanks filled in, as a user would
const prodEnv = { ...envFile('deploy/example.env'), SAPI_URL: 'https://connection.example.com', SAPI_TOKEN: 'prod-token', POSTGRES_PASSWORD: 'pg-secret' };
const dev = load(devEnv);
const prod = load(prodEnv);
const devProfile = (service: Service) => service.profiles?.includes('dev') ?? false;
const option = (args: string[], name: string) => args[args.indexOf(name) + 1];

const schema = JSON.parse(read('test/fixtures/compose-spec/compose-spec.json')) as Record<string, unknown>;
const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false, validateSchema: false });
const validate = ajv.compile(schema);
const schemaErrors = (document: unknown) =>
  validate(document) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`);

describe('docker-compose.yml', () => {
  it('is a valid Compose file by the Compose Specification schema, as written and after interpolation with the dev and production env files', () => {
    // the schema rejects what Compose rejects: an unknown service key, a bad depends_on condition, a wrong type
    expect(schemaErrors({ services: { a: { image: 'x:1', helthcheck: {} } } })).not.toEqual([]);
    expect(schemaErrors({ services: { a: { image: 'x:1', depends_on: { b: { condition: 'service_ready' } } } } })).not.toEqual([]);
    expect(schemaErrors(parse(raw, { merge: true }))).toEqual([]);
    expect(schemaErrors(dev)).toEqual([]);
    expect(schemaErrors(prod)).toEqual([]);
  });

  it('refuses to start without the Storage URL and token and the database password, naming them', () => {
    const message = (() => {
      try {
        load({});
        return '';
      } catch (err) {
        return (err as Error).message;
      }
    })();
    for (const name of ['SAPI_URL', 'SAPI_TOKEN', 'POSTGRES_PASSWORD']) expect(message).toContain(name);
  });

  it('runs Temporal on PostgreSQL with its UI, admin tools, workers and Prometheus; MinIO and the emulator only in the dev profile', () => {
    const production = Object.keys(prod.services).filter((name) => !devProfile(prod.services[name]!));
    expect(production.sort()).toEqual(['postgresql', 'prometheus', 'temporal', 'temporal-admin-tools', 'temporal-ui', 'worker']);
    const devOnly = Object.keys(prod.services).filter((name) => devProfile(prod.services[name]!));
    expect(devOnly.sort()).toEqual(['emulator', 'minio']);
    for (const name of devOnly) expect(prod.services[name]!.profiles).toEqual(['dev']);
  });

  it('gives every service a health check, and makes every dependant wait for its dependency to be healthy', () => {
    for (const [name, service] of Object.entries(prod.services)) {
      expect(`${name}: ${JSON.stringify(service.healthcheck?.test ?? null)}`).toMatch(/\[.+\]/);
      expect(service.healthcheck?.disable).not.toBe(true);
      for (const [dependency, { condition }] of Object.entries(service.depends_on ?? {})) {
        expect(prod.services[dependency]).toBeDefined();
        // Prometheus may start before Temporal answers: it retries the scrape on its own
        if (name !== 'prometheus') expect(`${name} -> ${dependency}: ${condition}`).toBe(`${name} -> ${dependency}: service_healthy`);
      }
    }
  });

  it('pins every image to an explicit version and builds ours under the package version: the worker from the plugin package alone', () => {
    const version = (JSON.parse(read('packages/sapi-temporal/package.json')) as { version: string }).version;
    for (const [name, service] of Object.entries(dev.services)) {
      expect(`${name}: ${service.image}`).toMatch(/:[^:/]+$/);
      expect(service.image).not.toMatch(/:(latest|main|dev|stable|edge)$/);
      // a tag with a version number in it, not a floating major like postgres:16
      expect(`${name}: ${service.image}`).toMatch(/:v?\d+\.\d+|:RELEASE\.\d{4}-/);
    }
    expect(prod.services.worker).toMatchObject({ build: { context: '.', dockerfile: 'deploy/worker.Dockerfile' }, image: `sapi-temporal-worker:${version}` });
    // the emulator (dev profile) runs from the workspace image, which has it
    expect(dev.services.emulator).toMatchObject({ build: '.', image: `sapi-temporal:${version}` });
    const built = Object.entries(dev.services)
      .filter(([, service]) => service.build !== undefined)
      .map(([name]) => name);
    expect(built.sort()).toEqual(['emulator', 'worker']);
  });

  it('runs the Temporal server on PostgreSQL, after the admin tools set up its schema', () => {
    const temporal = prod.services.temporal!;
    expect(temporal.image).toMatch(/^temporalio\/server:/);
    expect(JSON.stringify(temporal)).not.toMatch(/start-dev|sqlite/i);
    expect(temporal.environment).toMatchObject({ DB: 'postgres12', POSTGRES_SEEDS: 'postgresql', POSTGRES_USER: 'temporal', POSTGRES_PWD: 'pg-secret' });
    expect(prod.services.postgresql!.image).toMatch(/^postgres:/);
    expect(prod.services.postgresql!.environment).toMatchObject({ POSTGRES_USER: 'temporal', POSTGRES_PASSWORD: 'pg-secret' });
    expect(prod.services.postgresql!.healthcheck!.test).toEqual(expect.arrayContaining(['pg_isready']));
    expect(Object.keys(temporal.depends_on!).sort()).toEqual(['postgresql', 'temporal-admin-tools']);
    // the admin tools run our schema script and report healthy once the schema is there
    const admin = prod.services['temporal-admin-tools']!;
    expect(admin.image).toMatch(/^temporalio\/admin-tools:1\.29\.1-/);
    expect(temporal.image).toBe('temporalio/server:1.29.1');
    expect(admin.environment).toMatchObject({ POSTGRES_SEEDS: 'postgresql', POSTGRES_PWD: 'pg-secret', TEMPORAL_ADDRESS: 'temporal:7233' });
    expect(admin.volumes).toContain('./deploy/temporal/admin-tools.sh:/etc/temporal/sapi/admin-tools.sh:ro');
    expect(admin.healthcheck!.test).toEqual(['CMD', 'test', '-f', '/tmp/schema-ready']);
    const script = read('deploy/temporal/admin-tools.sh');
    expect(script).toContain('SCHEMA_READY_FILE:-/tmp/schema-ready');
    expect(script).toMatch(/update-schema -d "\$SCHEMA_DIR\/\$kind\/versioned"/);
    expect(spawnSync('bash', ['-n', join(root, 'deploy/temporal/admin-tools.sh')]).status).toBe(0);
    // its health check names the namespace the workers use
    expect(temporal.healthcheck!.test).toEqual(expect.arrayContaining(['namespace', 'describe', prod.services.worker!.environment!.TEMPORAL_NAMESPACE]));
  });

  it('scales the workers: two replicas by default, no fixed container name or host port', () => {
    const worker = prod.services.worker!;
    expect(worker.deploy!.replicas).toBeGreaterThanOrEqual(2);
    expect(worker.container_name).toBeUndefined();
    expect(worker.ports).toBeUndefined();
    expect(worker.command).toEqual(['worker']);
    expect(worker.depends_on).toEqual({ temporal: { condition: 'service_healthy' } });
  });

  it('points no production service at the emulator or MinIO, and the production workers at the configured Storage API', () => {
    for (const [name, service] of Object.entries(prod.services)) {
      if (!devProfile(service)) expect(`${name}: ${JSON.stringify(service)}`).not.toMatch(/emulator|minio/i);
    }
    const settings = loadSettings(prod.services.worker!.environment);
    expect(settings.temporal.address).toBe('temporal:7233');
    expect(settings.connections.default).toMatchObject({ url: 'https://connection.example.com', token: 'prod-token' });
    expect(settings.connections.default!.importUrl).toBeUndefined();
    expect(settings.s3.endpoint).toBeUndefined();
    expect(settings.workDir).toBe('/tmp/sapi-temporal');
  });

  it('points the workers at the emulator and MinIO in the dev profile, with the token the emulator accepts', () => {
    const worker = dev.services.worker!;
    const emulator = dev.services.emulator!;
    const settings = loadSettings(worker.environment);
    const port = option(emulator.command!, '--port');
    expect(settings.connections.default).toMatchObject({
      url: `http://emulator:${port}`,
      token: option(emulator.command!, '--token'),
      importUrl: `http://emulator:${port}/import`,
    });
    expect(settings.s3.endpoint).toBe('http://minio:9000');
    expect(emulator.environment!.AWS_ENDPOINT_URL_S3).toBe('http://minio:9000');
    expect(emulator.environment!.AWS_ACCESS_KEY_ID).toBe(dev.services.minio!.environment!.MINIO_ROOT_USER);
    expect(emulator.environment!.AWS_SECRET_ACCESS_KEY).toBe(dev.services.minio!.environment!.MINIO_ROOT_PASSWORD);
    expect(emulator.environment!.AWS_ACCESS_KEY_ID).not.toBe('');
    expect(emulator.environment!.SAPI_EMULATOR_ADMIN_TOKEN).toBe(devEnv.SAPI_EMULATOR_ADMIN_TOKEN);
    expect(emulator.environment!.SAPI_EMULATOR_ADMIN_TOKEN).not.toBe('');
    expect(devEnv.COMPOSE_PROFILES).toBe('dev');
    expect(emulator.depends_on).toEqual({ minio: { condition: 'service_healthy' } });
    // the emulator's health check asks its Storage API index on the port it listens on
    expect(JSON.stringify(emulator.healthcheck!.test)).toContain(`127.0.0.1:${port}/v2/storage`);
  });

  it('starts our services with CLI commands and options that exist', () => {
    const commands = buildProgram().commands;
    const names = commands.map((command) => command.name());
    for (const service of ['emulator', 'worker']) expect(names).toContain(dev.services[service]!.command![0]);
    const emulator = commands.find((command) => command.name() === 'emulator')!;
    const flags = emulator.options.map((o) => o.long);
    for (const arg of dev.services.emulator!.command!.filter((a) => a.startsWith('--'))) expect(flags).toContain(arg);
    // the admin secret reaches the emulator through the environment variable --admin-token defaults to
    expect(emulator.options.find((o) => o.long === '--admin-token')!.description).toContain('SAPI_EMULATOR_ADMIN_TOKEN');
  });

  it("keeps data in named volumes the containers' users can write, and mounts only config files from the checkout", () => {
    const declared = Object.keys(prod.volumes);
    const used = new Set<string>();
    for (const [name, service] of Object.entries(prod.services)) {
      for (const volume of service.volumes ?? []) {
        const [source, target, mode] = volume.split(':');
        if (source!.startsWith('.')) {
          expect(`${name}: ${volume}`).toMatch(/^[^:]+: \.\/deploy\/[^:]+:[^:]+:ro$/);
          expect(statSync(join(root, source!)).isFile()).toBe(true);
        } else {
          expect(declared).toContain(source);
          expect(mode).toBeUndefined();
          used.add(source!);
          expect(target).not.toBe('/data/'); // a named volume per data folder, never shared
        }
      }
    }
    expect([...used].sort()).toEqual(declared.sort());
    // the emulator (as `node`) writes a folder the image creates owned by `node`; a fresh volume takes that owner
    const dataDir = option(dev.services.emulator!.command!, '--data-dir');
    expect(dev.services.emulator!.volumes).toEqual([`emulator-data:${dataDir}`]);
    expect(read('Dockerfile')).toContain(`mkdir -p ${dataDir} && chown node:node ${dataDir}`);
    expect(prod.services.postgresql!.volumes).toEqual(['postgresql-data:/var/lib/postgresql/data']);
    expect(prod.services.prometheus!.volumes).toContain('prometheus-data:/prometheus');
  });

  it('has Prometheus scrape the metrics endpoint Temporal serves', () => {
    const endpoint = prod.services.temporal!.environment!.PROMETHEUS_ENDPOINT!;
    const config = parse(read('deploy/prometheus.yml')) as { scrape_configs: { job_name: string; static_configs: { targets: string[] }[] }[] };
    const targets = config.scrape_configs.flatMap((job) => job.static_configs.flatMap((c) => c.targets));
    expect(targets).toContain(`temporal:${endpoint.split(':')[1]}`);
    expect(prod.services.prometheus!.volumes).toContain('./deploy/prometheus.yml:/etc/prometheus/prometheus.yml:ro');
    expect(parse(read('deploy/temporal/dynamicconfig.yaml'))).toEqual(
      expect.objectContaining({
        'limit.blobSize.error': [{ value: 2097152 }],
        'matching.enableFairness': [{ value: true }],
        'matching.useNewMatcher': [{ value: true }],
      }),
    );
  });
});

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile');
  const stages = dockerfile.split(/^FROM /m).slice(1);
  const runtime = stages.at(-1)!;

  it('builds in one stage and runs a pinned slim Node 20 image in another, with production dependencies only', () => {
    expect(stages).toHaveLength(2);
    for (const stage of stages) expect(stage).toMatch(/^node:20\.\d+\.\d+-bookworm-slim\b/);
    expect(stages[0]).toMatch(/^RUN npx tsc -p tsconfig\.build\.json$/m);
    expect(runtime).toMatch(/^RUN npm install --omit=dev\b/m);
    expect(runtime).toMatch(/^COPY --from=build \/app\/lib \.\/lib$/m);
    expect(runtime).not.toMatch(/COPY (--from=build \/app\/node_modules|src\b|\. )/);
    // the lock lacks other platforms' optional binaries, which `npm ci` refuses (checked: npm ci fails on this lock)
    expect(dockerfile).not.toMatch(/^RUN .*npm ci\b/m);
  });

  it('runs as the non-root node user with a health check, through the bin/sapi-temporal shell wrapper', () => {
    expect(runtime).toMatch(/^USER node$/m);
    expect(runtime).toMatch(/^HEALTHCHECK .*CMD \["node", "\/app\/deploy\/worker-healthcheck\.js"\]$/m);
    expect(runtime).toMatch(/^ENTRYPOINT \["\/app\/bin\/sapi-temporal"\]$/m);
    expect(runtime).toMatch(/^CMD \["worker"\]$/m);
    // the wrapper is a sh script: `node bin/sapi-temporal` would not run it
    expect(read('bin/sapi-temporal')).toMatch(/^#!\/bin\/sh\n/);
    for (const [, source] of runtime.matchAll(/^COPY (?!--from)(\S+)/gm)) expect(existsSync(join(root, source!))).toBe(true);
  });

  it('ships a worker health check that reports a Temporal it cannot reach as unhealthy', () => {
    const run = spawnSync(process.execPath, [join(root, 'deploy/worker-healthcheck.js')], {
      env: { ...process.env, TEMPORAL_ADDRESS: '127.0.0.1:9', SAPI_HEALTHCHECK_TIMEOUT_MS: '2000' },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/unhealthy|connect|UNAVAILABLE|refused/i);
  }, 25_000);

  it('keeps the build context to what the builds copy', () => {
    const ignored = read('.dockerignore').split('\n');
    for (const path of ['node_modules', 'lib', '.git', 'test', '.env']) expect(ignored).toContain(path);
    for (const path of ['src', 'bin', 'deploy', 'package.json', 'packages']) expect(ignored).not.toContain(path);
  });
});

describe('deploy/worker.Dockerfile (the lean worker image)', () => {
  const dockerfile = read('deploy/worker.Dockerfile');
  const stages = dockerfile.split(/^FROM /m).slice(1);
  const runtime = stages.at(-1)!;
  const plugin = JSON.parse(read('packages/sapi-temporal/package.json')) as { peerDependencies: Record<string, string> };
  const sdkVersion = (JSON.parse(read('package.json')) as { dependencies: Record<string, string> }).dependencies['@temporalio/worker']!;

  it('packs the plugin package in one stage and installs only that tarball and its SDK peers in the runtime stage', () => {
    expect(stages).toHaveLength(2);
    for (const stage of stages) expect(stage).toMatch(/^node:20\.\d+\.\d+-bookworm-slim\b/);
    expect(stages[0]).toMatch(/^RUN npm pack -w sapi-temporal --pack-destination \/pack$/m);
    expect(runtime).toMatch(/npm install --omit=dev\b.* \/pack\/sapi-temporal-\*\.tgz/);
    // every peer (the optional ones too: the image serves Azure stacks and can trace), at the version the workspace pins
    // (and the package was tested with), and nothing else
    const installed = [...runtime.matchAll(/(@(?:temporalio|opentelemetry|azure)\/[a-z-]+)@(\S+)/g)].map(([, name, version]) => `${name}@${version}`);
    const pinned = Object.entries(plugin.peerDependencies).map(([name, range]) => `${name}@${name.startsWith('@temporalio/') ? sdkVersion : range}`);
    expect(installed.sort()).toEqual(pinned.sort());
    // nothing of the workspace reaches the runtime stage but the health check script
    expect([...runtime.matchAll(/^COPY (?!--from=pack \/pack \/pack$)(.*)$/gm)].map(([, args]) => args)).toEqual([
      'deploy/worker-healthcheck.js ./deploy/worker-healthcheck.js',
    ]);
    expect(runtime).toMatch(/test ! -e node_modules\/@duckdb && test ! -e node_modules\/fastify/);
    expect(dockerfile).not.toMatch(/^RUN .*npm ci\b/m);
    for (const [, source] of dockerfile.matchAll(/^COPY (?!--from)(\S+)/gm)) expect(existsSync(join(root, source!))).toBe(true);
  });

  it("runs the installed package's CLI as the non-root node user, with the health check", () => {
    expect(runtime).toMatch(/^USER node$/m);
    expect(runtime).toMatch(/^HEALTHCHECK .*CMD \["node", "\/app\/deploy\/worker-healthcheck\.js"\]$/m);
    expect(runtime).toMatch(/^ENTRYPOINT \["\/app\/node_modules\/\.bin\/sapi-temporal"\]$/m);
    expect(runtime).toMatch(/^CMD \["worker"\]$/m);
    // the package's bin is a sh wrapper that follows its symlink from node_modules/.bin
    expect(read('packages/sapi-temporal/bin/sapi-temporal')).toMatch(/^#!\/bin\/sh\n[\s\S]*readlink -f "\$0"/);
    // two malloc arenas and a fixed mmap threshold unless the environment says otherwise (per-thread arenas held
    // ~40 MB after a download; the dynamic threshold ~80 MB of heap after transfers)
    for (const wrapper of ['bin/sapi-temporal', 'packages/sapi-temporal/bin/sapi-temporal']) {
      expect(read(wrapper)).toMatch(/^export MALLOC_ARENA_MAX="\$\{MALLOC_ARENA_MAX:-2\}"$/m);
      expect(read(wrapper)).toMatch(/^export MALLOC_MMAP_THRESHOLD_="\$\{MALLOC_MMAP_THRESHOLD_:-131072\}"$/m);
    }
  });

  it.each(['bin/sapi-temporal', 'packages/sapi-temporal/bin/sapi-temporal'])('%s adds 8 MB semi-spaces to NODE_OPTIONS unless it sets its own', (wrapper) => {
    // the wrapper's NODE_OPTIONS lines, run by sh as they are (the node it then execs is not reached)
    const script =
      read(wrapper)
        .split('\n')
        .filter((line) => !line.startsWith('exec '))
        .join('\n') + '\nprintf %s "$NODE_OPTIONS"\n';
    const run = (env: Record<string, string>) => spawnSync('sh', ['-c', script], { env: { PATH: process.env.PATH ?? '', ...env }, encoding: 'utf8' }).stdout;
    expect(run({})).toBe('--max-semi-space-size=8');
    expect(run({ NODE_OPTIONS: '--enable-source-maps' })).toBe('--enable-source-maps --max-semi-space-size=8');
    expect(run({ NODE_OPTIONS: '--max-old-space-size=512 --max-semi-space-size=2' })).toBe('--max-old-space-size=512 --max-semi-space-size=2');
  });
});
