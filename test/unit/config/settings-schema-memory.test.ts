import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const repoRoot = join(__dirname, '..', '..', '..');

describe('loadSettings keeps no zod schema once it has read the settings', () => {
  it('leaves no live zod object schema after a full GC (the settings schema is ~1 MB of heap for a worker to carry)', () => {
    // in a child process, so that no other module's schemas count: the config module alone, settings read, a full GC
    const child = spawnSync(
      process.execPath,
      [
        '--expose-gc',
        '--no-warnings',
        '-r',
        './scripts/ts-register.js',
        '-e',
        `const { z } = require('zod');
        const { loadSettings } = require('./src/config');
        const settings = loadSettings({ SAPI_URL: 'http://127.0.0.1:1', SAPI_TOKEN: 'token', SAPI_MAX_CACHED_WORKFLOWS: '7' });
        globalThis.gc();
        process.stdout.write(JSON.stringify({ cached: settings.worker.maxCachedWorkflows, schemas: require('node:v8').queryObjects(z.ZodObject, { format: 'count' }) }));`,
      ],
      { cwd: repoRoot, encoding: 'utf8', env: { PATH: process.env.PATH } },
    );
    expect(child.stderr).toBe('');
    expect(JSON.parse(child.stdout)).toEqual({ cached: 7, schemas: 0 });
  });
});
