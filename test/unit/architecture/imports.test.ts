/**
 * The layout's rules, checked on the import graph of src/: workflows and activities meet only in src/contracts (types,
 * constants and pure helpers both import), and no module imports itself through others.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

const src = join(__dirname, '../../../src');

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** Relative value imports (not `import type`) of every module, as paths relative to src without `.ts`. */
function valueImportGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of files(src)) {
    const source = readFileSync(file, 'utf8');
    const specs = [...source.matchAll(/^(?:import|export)\s+(?!type\b)(?:[^;]*?from\s+)?'(\.[^']+)'/gm)].map((m) => m[1]!);
    const targets = specs.map((spec) => {
      const base = join(dirname(file), spec);
      const resolved = existsSync(`${base}.ts`) ? `${base}.ts` : join(base, 'index.ts');
      return relative(src, resolved).replace(/\.ts$/, '');
    });
    graph.set(relative(src, file).replace(/\.ts$/, ''), targets);
  }
  return graph;
}

describe('the layout of src/', () => {
  const graph = valueImportGraph();

  it('reads the import graph (a check on the checks)', () => {
    expect(graph.get('activities/index')).toContain('activities/ensure-bucket');
    expect(graph.get('workflows/import-table')).toContain('contracts/error-codes');
    expect(graph.get('storage-api/index')).toContain('storage-api/client');
  });

  it('keeps activities and workflows apart: no value import from one into the other', () => {
    const crossing: string[] = [];
    for (const [from, targets] of graph) {
      for (const to of targets) {
        if ((from.startsWith('activities/') && to.startsWith('workflows/')) || (from.startsWith('workflows/') && to.startsWith('activities/'))) crossing.push(`${from} -> ${to}`);
      }
    }
    expect(crossing).toEqual([]);
  });

  it('has no import cycles', () => {
    const cycles: string[] = [];
    const state = new Map<string, 'visiting' | 'done'>();
    const visit = (node: string, path: string[]) => {
      if (state.get(node) === 'done') return;
      if (state.get(node) === 'visiting') {
        cycles.push([...path.slice(path.indexOf(node)), node].join(' -> '));
        return;
      }
      state.set(node, 'visiting');
      for (const next of graph.get(node) ?? []) visit(next, [...path, node]);
      state.set(node, 'done');
    };
    for (const node of graph.keys()) visit(node, []);
    expect(cycles).toEqual([]);
  });
});
