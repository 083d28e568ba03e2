/**
 * The published plugin package (`packages/sapi-temporal`) is built from the modules its entry points reach in src/
 * (its tsconfig). These checks read that graph as the build sees it: every package it imports is one the package
 * declares (a dependency, or a peer for `@temporalio/*`), and none of the emulator's, dev stack's or demo's modules
 * is in it, so an install of the package pulls none of their dependencies (DuckDB, fastify).
 */
import { builtinModules } from 'node:module';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import ts from 'typescript';
import { OPTIONAL_FEATURES } from '../../../src/optional-deps';

const root = join(__dirname, '../../..');
const packageDir = join(root, 'packages/sapi-temporal');
const src = join(root, 'src');

interface PackageJson {
  name: string;
  version: string;
  private?: boolean;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  devDependencies?: Record<string, string>;
  exports?: Record<string, string | Record<string, string>>;
  typesVersions?: Record<string, Record<string, string[]>>;
  scripts?: Record<string, string>;
  files?: string[];
}

const manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as PackageJson;
const workspace = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as PackageJson;

/** The source files the package's build compiles: what its tsconfig's entry points reach, as tsc resolves it. */
function compiledSources(): string[] {
  const configPath = join(packageDir, 'tsconfig.json');
  const config = ts.readConfigFile(configPath, (path) => ts.sys.readFile(path));
  if (config.error) throw new Error(ts.flattenDiagnosticMessageText(config.error.messageText, '\n'));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, packageDir, undefined, configPath);
  const program = ts.createProgram({ rootNames: parsed.fileNames, options: { ...parsed.options, noEmit: true } });
  return program
    .getSourceFiles()
    .map((file) => file.fileName)
    .filter((file) => file.startsWith(`${src}/`));
}

/** The modules a source loads by path: the string arguments of its `require.resolve(…)` calls (comments aside). */
function resolvedPaths(file: string): string[] {
  const paths: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && node.expression.getText() === 'require.resolve' && ts.isStringLiteral(node.arguments[0]!))
      paths.push(node.arguments[0].text);
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true));
  return paths;
}

/** Every module a source names: imports and exports (type-only too: declarations keep them), require(), import(). */
function specifiers(file: string): string[] {
  const named = ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles.map((ref) => ref.fileName);
  return [...named, ...resolvedPaths(file)];
}

/** `@scope/name/sub` → `@scope/name`, `name/sub` → `name`. */
function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

const builtins = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]));
const isRelative = (specifier: string) => specifier.startsWith('.');

describe('the plugin package (packages/sapi-temporal)', () => {
  const sources = compiledSources();
  const modules = sources.map((file) => relative(src, file).replace(/\.ts$/, ''));

  it('compiles the plugin, its workflows and the CLI (a check on the checks)', () => {
    for (const module of ['index', 'plugin', 'worker', 'workflows/index', 'activities/index', 'cli/index', 'cli/import', 'codec/failure-converter']) {
      expect(modules).toContain(module);
    }
  });

  it('compiles none of the emulator, the dev stack, the sample API or the demo', () => {
    const devKit = modules.filter((module) => /^(emulator|dev|sample-api|demo)\//.test(module) || /^cli\/(dev-kit|dev|emulator|demo)$/.test(module));
    expect(devKit).toEqual([]);
  });

  it('imports only packages it declares: runtime dependencies, or @temporalio/* peers', () => {
    const declared = new Set([...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.peerDependencies ?? {})]);
    const undeclared: string[] = [];
    for (const file of sources) {
      for (const specifier of specifiers(file)) {
        if (isRelative(specifier) || builtins.has(specifier) || declared.has(packageName(specifier))) continue;
        undeclared.push(`${relative(src, file)} imports ${specifier}`);
      }
    }
    expect(undeclared).toEqual([]);
  });

  it("declares no dependency its sources do not import, and none of the emulator's", () => {
    const imported = new Set(
      sources.flatMap((file) =>
        specifiers(file)
          .filter((s) => !isRelative(s) && !builtins.has(s))
          .map(packageName),
      ),
    );
    const unused = [...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.peerDependencies ?? {})].filter((name) => !imported.has(name));
    expect(unused).toEqual([]);
    for (const name of ['@duckdb/node-api', 'fastify', '@fastify/multipart', '@aws-sdk/client-sts', 'csv-stringify']) {
      expect(Object.keys(manifest.dependencies ?? {})).not.toContain(name);
    }
  });

  it("takes the Temporal SDK as peers at the workspace's version, the Azure client and the tracing packages as optional peers at the workspace's versions (those optional-deps.ts names), and its other dependencies at the workspace's versions", () => {
    const sdk = workspace.dependencies!['@temporalio/worker']!;
    const optional = Object.keys(manifest.peerDependenciesMeta ?? {}).filter((name) => manifest.peerDependenciesMeta![name]!.optional);
    // loaded only when an Azure stack is met or tracing is on (optional-deps.ts)
    expect(optional.sort()).toEqual([
      '@azure/storage-blob',
      '@opentelemetry/api',
      '@opentelemetry/context-async-hooks',
      '@opentelemetry/core',
      '@opentelemetry/exporter-trace-otlp-http',
      '@opentelemetry/resources',
      '@opentelemetry/sdk-trace-base',
      '@temporalio/interceptors-opentelemetry',
    ]);
    for (const name of optional) {
      const version = workspace.dependencies![name]!;
      expect(`${name}@${manifest.peerDependencies?.[name]}`).toBe(`${name}@${name.startsWith('@temporalio/') ? `~${version}` : version}`);
      expect(manifest.devDependencies?.[name]).toBe(version);
    }
    // the install command a SAPI_MISSING_DEPENDENCY error names is the optional peers at the versions tested (dev)
    const named = Object.values(OPTIONAL_FEATURES).flatMap((feature) => feature.packages);
    expect([...named].sort()).toEqual(optional.map((name) => `${name}@${manifest.devDependencies![name]}`).sort());
    for (const [name, range] of Object.entries(manifest.peerDependencies ?? {})) {
      if (optional.includes(name)) continue;
      expect(name).toMatch(/^@temporalio\//);
      expect(range).toBe(`~${sdk}`);
      expect(manifest.devDependencies?.[name]).toBe(sdk);
    }
    expect(Object.keys(manifest.dependencies ?? {}).filter((name) => name.startsWith('@temporalio/'))).toEqual([]);
    for (const [name, version] of Object.entries(manifest.dependencies ?? {})) expect(`${name}@${version}`).toBe(`${name}@${workspace.dependencies![name]}`);
    expect(manifest.version).toBe(workspace.version);
  });

  it('finds every module it loads by path (require.resolve) among the compiled ones', () => {
    // resolved only to learn whether the dev kit is there (the workspace) or not (the package)
    const probed = new Set(['cli/index.ts: ./dev-kit']);
    const missing: string[] = [];
    for (const file of sources) {
      for (const target of resolvedPaths(file).filter(isRelative)) {
        const base = join(dirname(file), target);
        const where = `${relative(src, file)}: ${target}`;
        if (!sources.includes(`${base}.ts`) && !sources.includes(join(base, 'index.ts')) && !probed.has(where)) missing.push(where);
      }
    }
    expect(missing).toEqual([]);
  });

  it('builds on pack and exports each entry point with its types, for `node` and `nodenext` resolution alike', () => {
    expect(manifest.scripts?.prepack).toBe('npm run build');
    expect(manifest.files).toEqual(['bin', 'lib']);
    const entries = Object.entries(manifest.exports ?? {}).filter(([subpath]) => subpath !== './package.json');
    expect(entries.map(([subpath]) => subpath)).toEqual(['.', './workflows', './nexus']);
    for (const [subpath, target] of entries) {
      const { types, default: main } = target as Record<string, string>;
      const module = subpath === '.' ? 'index' : `${subpath.slice(2)}/index`;
      expect({ types, main }).toEqual({ types: `./lib/${module}.d.ts`, main: `./lib/${module}.js` });
      expect(existsSync(join(src, `${module}.ts`))).toBe(true);
      // `moduleResolution: node` ignores `exports`: typesVersions maps the subpath to its declarations
      if (subpath !== '.') expect(manifest.typesVersions?.['*']?.[subpath.slice(2)]).toEqual([`lib/${module}.d.ts`]);
    }
  });

  it('leaves the workspace private, with no `./testing` export pointing at nothing', () => {
    expect(workspace.private).toBe(true);
    expect(workspace.name).not.toBe(manifest.name);
    expect(Object.keys(workspace.exports ?? {})).not.toContain('./testing');
    expect(Object.keys(manifest.exports ?? {})).not.toContain('./testing');
  });
});
