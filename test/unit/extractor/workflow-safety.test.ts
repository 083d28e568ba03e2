/**
 * The modules a workflow imports must stay sandbox-safe: only relative imports of other pure modules (types from
 * anywhere) or `@temporalio/common`, and no clock, randomness or Node globals.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

const src = join(__dirname, '../../../src');
const extractor = [
  'types',
  'checkpoint',
  'children',
  'errors',
  'flatten',
  'md5',
  'path',
  'records',
  'request',
  'scroller',
  'table-names',
  'table-schema',
  'url',
  'duration',
  'page',
  'traversal',
  'secrets',
  'paging',
  'secret-echo',
  'json-parser',
  'json-parser-legacy',
  'php-values',
  'response-filter',
  'recursion-filter',
  'mapping',
  'user-data',
  'run-state',
  'http-client',
  'functions',
  'php-time',
  'user-data-functions',
  'config-iterations',
  'parser-struct',
].map((n) => `extractor/${n}`);
const contracts = readdirSync(join(src, 'contracts'))
  .filter((f) => f.endsWith('.ts'))
  .map((f) => `contracts/${f.replace(/\.ts$/, '')}`);
const PURE = [...extractor, ...contracts, 'errors', 'http/redact'];
const PACKAGES = ['@temporalio/common'];

describe('workflow-safe modules (extractor pure code, contracts, the error registry)', () => {
  it.each(PURE)('%s.ts imports only pure modules and uses no clock, randomness or Node globals', (name) => {
    const source = readFileSync(join(src, `${name}.ts`), 'utf8');
    const valueImports = [...source.matchAll(/^(?:import|export)\s+(?!type\b)[^;]*?from\s+'([^']+)'/gm)].map((m) => m[1]!);
    for (const spec of valueImports) {
      if (!spec.startsWith('.')) {
        expect(PACKAGES).toContain(spec);
        continue;
      }
      const target = relative(src, normalize(join(src, dirname(name), spec)));
      expect(PURE).toContain(PURE.includes(`${target}/index`) ? `${target}/index` : target);
    }
    const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
    expect(code).not.toMatch(/\b(Date\.now|new Date\(|Math\.random|Buffer\.|process\.|require\(|setTimeout|TextEncoder)/);
  });
});
