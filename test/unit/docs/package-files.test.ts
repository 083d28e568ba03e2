/**
 * What the published package ships besides its code: source maps that stand on their own (the package has no
 * sources, so each map carries them inline), and the project's license, changelog and docs entry points.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

const root = join(__dirname, '..', '..', '..');
const packageDir = join(root, 'packages', 'sapi-temporal');

interface Manifest {
  license?: string;
  files?: string[];
}

function buildOptions(): ts.CompilerOptions {
  const configPath = join(packageDir, 'tsconfig.json');
  const config = ts.readConfigFile(configPath, ts.sys.readFile);
  return ts.parseJsonConfigFileContent(config.config, ts.sys, packageDir, undefined, configPath).options;
}

function mapsUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? mapsUnder(join(dir, entry.name)) : entry.name.endsWith('.map') ? [join(dir, entry.name)] : [],
  );
}

describe('the published package', () => {
  const manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as Manifest;

  it('ships no source map that points at sources it lacks: maps carry their sources inline, and no src/ is shipped', () => {
    const options = buildOptions();
    expect(manifest.files).toEqual(['bin', 'lib']);
    if (options.sourceMap || options.declarationMap) expect(options.inlineSources).toBe(true);
    // declaration maps have no inline form: they would point at ../../src/*.ts, which the package does not ship
    expect(options.declarationMap ?? false).toBe(false);
  });

  it('a build that exists has every map self-contained (sourcesContent for every source)', () => {
    const lib = join(packageDir, 'lib');
    if (!existsSync(lib)) return; // built by `npm pack` (prepack) or `tsc -p packages/sapi-temporal/tsconfig.json`
    const lacking = mapsUnder(lib).filter((file) => {
      const map = JSON.parse(readFileSync(file, 'utf8')) as { sources: string[]; sourcesContent?: (string | null)[] };
      return map.sources.some((_, index) => typeof map.sourcesContent?.[index] !== 'string');
    });
    expect(lacking).toEqual([]);
  });

  it('has the license the manifests name, a changelog, and docs the README links', () => {
    const workspace = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Manifest;
    expect(manifest.license).toBe('MIT');
    expect(workspace.license).toBe(manifest.license);
    expect(readFileSync(join(root, 'LICENSE'), 'utf8')).toMatch(/^MIT License\n/);
    expect(readFileSync(join(root, 'CHANGELOG.md'), 'utf8')).toMatch(/^# Changelog\n/);
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    expect(readme.split('\n').length).toBeLessThanOrEqual(250);
    // every relative link of the README and of docs/ leads to a file of the repository (architecture.md and
    // emulator.md are written on other branches)
    const pending = new Set(['docs/architecture.md', 'docs/emulator.md']);
    const files = ['README.md', ...readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`), 'examples/README.md'];
    const broken: string[] = [];
    for (const file of files) {
      const dir = file.includes('/') ? file.slice(0, file.lastIndexOf('/')) : '.';
      for (const [, target] of readFileSync(join(root, file), 'utf8').matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue;
        const path = join(dir, target!).replace(/^\.\//, '');
        if (!existsSync(join(root, path)) && !pending.has(path)) broken.push(`${file} → ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });
});
