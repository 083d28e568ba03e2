/**
 * The layer order of docs/architecture.md ("Layers"), enforced on every import of src/ (type imports included): a
 * folder imports only the layers below its own, and no folders import each other round a cycle.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { layerViolations, moduleCycles, moduleReferences, parseLayers, readImports, unitCycles, unitOf, unitsOf, type ImportEdge } from './layering';

const root = join(__dirname, '../../..');
const src = join(root, 'src');

/** Writes a tree of sources under a fresh folder; answers its `src/`. */
function fixtureTree(files: Record<string, string>): { src: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'sapi-layers-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, 'src', path)), { recursive: true });
    writeFileSync(join(dir, 'src', path), text);
  }
  return { src: join(dir, 'src'), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

describe('the layer checker (a check on the checks)', () => {
  const order = parseLayers(
    [
      '# X',
      '',
      '## Layers',
      '',
      '1. `base` `util.ts` — the bottom',
      '2. `mid` `side` — two side by side',
      '3. `top` — the top',
      '',
      '## Next',
      '4. `not` — not a layer',
    ].join('\n'),
  );

  it('reads the numbered list of the Layers section, bottom first, and nothing after it', () => {
    expect(order).toEqual([{ units: ['base', 'util.ts'] }, { units: ['mid', 'side'] }, { units: ['top'] }]);
  });

  it('sees imports, exports, type imports, import() types and require() as the parser does, not as text', () => {
    const refs = moduleReferences(
      'x.ts',
      [
        "import { a } from './a';",
        "import type { B } from './b';",
        "import { type C } from './c';",
        "export { d } from './d';",
        "export type { E } from './e';",
        "let f: import('./f').F;",
        "const g = require('./g');",
        "const h = require.resolve('./h');",
        "// import { z } from './comment';",
        'const text = "import { y } from \'./string\'";',
      ].join('\n'),
    );
    expect(refs).toEqual([
      { specifier: './a', typeOnly: false },
      { specifier: './b', typeOnly: true },
      { specifier: './c', typeOnly: true },
      { specifier: './d', typeOnly: false },
      { specifier: './e', typeOnly: true },
      { specifier: './f', typeOnly: true },
      { specifier: './g', typeOnly: false },
      { specifier: './h', typeOnly: false },
    ]);
  });

  it('fails on a deliberately wrong import: names the file, the import and the rule, and the cycle it makes', () => {
    const tree = fixtureTree({
      'base/one.ts': "import type { Mid } from '../mid/two';\nexport type One = Mid;\n",
      'mid/two.ts': "import { one } from '../base/three';\nexport type Mid = string;\nexport const two = one;\n",
      'base/three.ts': 'export const one = 1;\n',
      'side/four.ts': "import { two } from '../mid/two';\nexport const four = two;\n",
      'top/five.ts': "import { two } from '../mid';\nimport { one } from '../base/three';\nexport const five = [one, two];\n",
      'mid/index.ts': "export { two } from './two';\n",
      'util.ts': 'export const util = 0;\n',
      'stray/six.ts': 'export const six = 6;\n',
    });
    try {
      const edges = readImports(tree.src);
      expect(layerViolations(edges, order, unitsOf(tree.src)).sort()).toEqual([
        "src/base/one.ts: type import '../mid/two' (src/mid/two.ts) breaks the order: base (layer 1) may import only layers below it; mid is layer 2",
        "src/side/four.ts: import '../mid/two' (src/mid/two.ts) breaks the order: side and mid are side by side in layer 2: neither may import the other",
        'src/stray is in no layer of the order',
      ]);
      expect(unitCycles(edges)).toEqual([['base', 'mid']]);
      expect(moduleCycles(edges)).toEqual([]);
    } finally {
      tree.remove();
    }
  });

  it('finds a cycle of modules in one folder made of type imports only', () => {
    const tree = fixtureTree({
      'cli/common.ts': "import type { Runner } from './run';\nexport interface Context { run: Runner }\n",
      'cli/run.ts': "import type { Context } from './common';\nexport type Runner = (context: Context) => void;\n",
      'cli/other.ts': "import type { Context } from './common';\nexport type Other = Context;\n",
    });
    try {
      const edges = readImports(tree.src);
      expect(unitCycles(edges)).toEqual([]);
      expect(moduleCycles(edges).map((cycle) => [...cycle].sort())).toEqual([['cli/common.ts', 'cli/run.ts']]);
    } finally {
      tree.remove();
    }
  });

  it('passes a tree that keeps the order', () => {
    const tree = fixtureTree({
      'base/one.ts': 'export const one = 1;\n',
      'mid/two.ts': "import { one } from '../base/one';\nexport const two = one;\n",
      'top/three.ts': "import type { two } from '../mid/two';\nexport type Three = typeof two;\n",
    });
    try {
      const edges = readImports(tree.src);
      expect(edges).toHaveLength(2);
      expect(layerViolations(edges, order, unitsOf(tree.src))).toEqual([]);
      expect(unitCycles(edges)).toEqual([]);
    } finally {
      tree.remove();
    }
  });
});

describe('src/ keeps the layer order of docs/architecture.md', () => {
  const layers = parseLayers(readFileSync(join(root, 'docs/architecture.md'), 'utf8'));
  const edges = readImports(src);

  it('reads the real import graph (type imports among them)', () => {
    const has = (from: string, to: string, typeOnly: boolean): boolean =>
      edges.some((e: ImportEdge) => e.from === from && e.to === to && e.typeOnly === typeOnly);
    expect(has('plugin.ts', 'activities/index.ts', false)).toBe(true);
    expect(has('workflows/import-table.ts', 'activities/index.ts', true)).toBe(true);
    expect(new Set(edges.map((e) => unitOf(e.from))).size).toBeGreaterThan(15);
  });

  it('every import goes down the order, and every folder of src/ is in it', () => {
    expect(layerViolations(edges, layers, unitsOf(src))).toEqual([]);
  });

  it('has no cycle between folders', () => {
    expect(unitCycles(edges)).toEqual([]);
  });

  it('has no cycle between modules, type imports included', () => {
    expect(moduleCycles(edges)).toEqual([]);
  });
});
