/**
 * `scripts/ts-register.js` (child processes and threads started from the TypeScript sources): a file is transpiled
 * once and then read from the cache, and an edited file is never served from the cache of its earlier contents.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(__dirname, '..', '..', '..');
const register = join(root, 'scripts', 'ts-register.js');
const cacheFile = (file: string, source: string) =>
  join(root, 'node_modules', '.cache', 'sapi-temporal-ts', `${createHash('sha256').update(file).update('\0').update(source).digest('hex')}.js`);

const valueOf = (file: string) =>
  execFileSync(process.execPath, ['-r', register, '-e', `console.log(require(${JSON.stringify(file)}).value)`], { encoding: 'utf8' }).trim();

describe('ts-register', () => {
  it('caches each transpiled file by name and contents, so an edit is never served stale', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'ts-register-')), 'module.ts');
    const first = 'export const value: number = 1;\n';
    writeFileSync(file, first);
    expect(valueOf(file)).toBe('1');
    expect(existsSync(cacheFile(file, first))).toBe(true);
    writeFileSync(cacheFile(file, first), 'exports.value = "from the cache";\n');
    expect(valueOf(file)).toBe('from the cache'); // the unchanged file is not transpiled again

    const second = 'export const value: string = "two";\n';
    writeFileSync(file, second);
    expect(valueOf(file)).toBe('two');
    expect(existsSync(cacheFile(file, second))).toBe(true);
  });
});
