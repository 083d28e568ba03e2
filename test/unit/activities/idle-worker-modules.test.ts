import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const repoRoot = join(__dirname, '..', '..', '..');

/**
 * What a worker process has loaded once the plugin is built (as `startWorker` builds it, before it connects): the
 * package's own modules and the packages, by name. In a child process, so that no other test's imports count.
 */
function loadedBy(script: string): { sources: string[]; packages: string[]; undiciFiles: string[]; result: unknown } {
  const child = spawnSync(
    process.execPath,
    [
      '-r',
      './scripts/ts-register.js',
      '-e',
      `(async () => {
        require('./src/worker');
        const { SapiPlugin } = require('./src/plugin');
        const { createActivities } = require('./src/activities');
        const { createActivityDeps } = require('./src/activities/deps');
        const { loadSettings } = require('./src/config');
        new SapiPlugin({ settings: loadSettings({}), startChecks: false });
        const activities = createActivities(createActivityDeps(loadSettings({})));
        const result = await (async () => { ${script} })();
        const files = Object.keys(require.cache);
        const sources = files.filter((f) => f.startsWith(process.cwd() + '/src/')).map((f) => f.slice(process.cwd().length + 1));
        const packages = [...new Set(files.map((f) => /node_modules\\/((@[^/]+\\/)?[^/]+)\\//.exec(f)?.[1]).filter(Boolean))];
        const undiciFiles = files.filter((f) => f.includes('/node_modules/undici/')).map((f) => f.split('/node_modules/undici/')[1]);
        process.stderr.write(JSON.stringify({ sources, packages, undiciFiles, result }));
      })()`,
    ],
    { cwd: repoRoot, encoding: 'utf8', env: { PATH: process.env.PATH } },
  );
  try {
    return JSON.parse(child.stderr) as { sources: string[]; packages: string[]; undiciFiles: string[]; result: unknown };
  } catch {
    throw new Error(`the child failed: ${child.stderr}`);
  }
}

describe('an idle worker loads only what imports and exports need', () => {
  it('has not loaded the extractor, Azure, tracing, DuckDB, fastify, the emulator or the AWS SDK parts uploads do not use', () => {
    const { sources, packages } = loadedBy('return undefined;');
    expect(sources).toContain('src/activities/download-file.ts'); // the plugin was built
    expect(sources.filter((f) => /^src\/(extractor|emulator|sample-api|dev|cli)\//.test(f) && f !== 'src/extractor/path.ts')).toEqual([]);
    expect(sources.filter((f) => /^src\/activities\/extract-/.test(f))).toEqual([]);
    expect(
      packages.filter((p) =>
        /^(@azure\/|@opentelemetry\/|@temporalio\/interceptors-opentelemetry|@duckdb\/|fastify|@fastify\/|@aws-sdk\/lib-storage|@aws-sdk\/client-sts)/.test(p),
      ),
    ).toEqual([]);
  });

  it("loads undici's agent, connector, redirect interceptor and request API, not its whole package (fetch, WebSocket, caches, mocks)", () => {
    // the pools a small import and an export use, and one request through the Storage pool's request API
    const { undiciFiles, result } = loadedBy(`
      const deps = createActivityDeps(loadSettings({}));
      void deps.http.transfers, deps.http.sources;
      const server = require('node:http').createServer((req, res) => res.end('answered')).listen(0, '127.0.0.1');
      await require('node:events').once(server, 'listening');
      const response = await deps.http.storage.request({ origin: 'http://127.0.0.1:' + server.address().port, path: '/', method: 'GET' });
      const body = await response.body.text();
      server.close();
      await deps.close();
      return { status: response.statusCode, body };`);
    expect(result).toEqual({ status: 200, body: 'answered' });
    expect(undiciFiles).toEqual(expect.arrayContaining(['lib/dispatcher/agent.js', 'lib/api/api-request.js', 'lib/interceptor/redirect.js']));
    expect(undiciFiles).not.toContain('index.js');
    expect(undiciFiles.filter((f) => /^lib\/(web|mock|cache)\//.test(f))).toEqual([]);
  });

  it('loads the extractor on the first call of an extraction activity, which then behaves as before', () => {
    const { sources, result } = loadedBy(
      `return activities.validateExtractConfig({ config: {} }).then(() => 'accepted', (err) => ({ type: err.type, name: activities.fetchPages.name }));`,
    );
    expect(result).toEqual({ type: 'SAPI_EXTRACT_CONFIG_INVALID', name: 'fetchPages' });
    expect(sources).toEqual(expect.arrayContaining(['src/activities/extract-activities.ts', 'src/extractor/config-schema.ts']));
  });
});
