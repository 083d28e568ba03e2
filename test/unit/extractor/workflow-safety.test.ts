/**
 * The modules a workflow imports must stay sandbox-safe: only relative imports of other pure modules (types from
 * anywhere), and no clock, randomness or Node globals.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = join(__dirname, '../../../src/extractor');
const PURE = ['pure', 'types', 'children', 'errors', 'flatten', 'md5', 'path', 'records', 'request', 'scroller', 'table-names', 'table-schema', 'url', 'duration', 'page'];

describe('workflow-safe extractor modules', () => {
  it.each(PURE)('%s.ts imports only pure modules and uses no clock, randomness or Node globals', (name) => {
    const source = readFileSync(join(dir, `${name}.ts`), 'utf8');
    const valueImports = [...source.matchAll(/^(?:import|export)\s+(?!type\b)[^;]*?from\s+'([^']+)'/gm)].map((m) => m[1]);
    for (const spec of valueImports) {
      expect(spec).toMatch(/^\.\/[a-z0-9-]+$/);
      expect(PURE).toContain(spec.slice(2));
    }
    const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
    expect(code).not.toMatch(/\b(Date\.now|new Date\(|Math\.random|Buffer\.|process\.|require\(|setTimeout|TextEncoder)/);
  });
});
