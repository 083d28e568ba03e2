/**
 * The layout's rules, checked on the import graph of src/: workflows and activities meet only in src/contracts (types,
 * constants and pure helpers both import), and no module imports itself through others.
 */
import { join } from 'node:path';
import { readImports } from './layering';

const src = join(__dirname, '../../../src');

/** Value imports (not `import type`) of every module, as paths relative to src without `.ts`, read by the parser. */
function valueImportGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const edge of readImports(src)) {
    if (edge.typeOnly) continue;
    const from = edge.from.replace(/\.ts$/, '');
    graph.set(from, [...(graph.get(from) ?? []), edge.to.replace(/\.ts$/, '')]);
  }
  return graph;
}

describe('the layout of src/', () => {
  const graph = valueImportGraph();

  it('reads the import graph (a check on the checks)', () => {
    expect(graph.get('activities/index')).toContain('activities/ensure-bucket');
    expect(graph.get('workflows/import-table')).toContain('errors');
    expect(graph.get('storage-api/index')).toContain('storage-api/client');
  });

  it('keeps activities and workflows apart: no value import from one into the other', () => {
    const crossing: string[] = [];
    for (const [from, targets] of graph) {
      for (const to of targets) {
        if ((from.startsWith('activities/') && to.startsWith('workflows/')) || (from.startsWith('workflows/') && to.startsWith('activities/')))
          crossing.push(`${from} -> ${to}`);
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
