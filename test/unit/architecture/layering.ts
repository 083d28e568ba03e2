/**
 * The layer checker behind `layers.test.ts`: reads every module's imports with the TypeScript parser (type imports,
 * `import()` types, `require()` and `require.resolve()` included), maps them onto the units of src/ (a folder, or a
 * file at the root of src/) and checks them against the layer order written in docs/architecture.md.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import ts from 'typescript';

/** One import of one module of src/, both ends relative to src/ (`object-storage/sources.ts`). */
export interface ImportEdge {
  from: string;
  to: string;
  /** As written in the source (`../http/redact`). */
  specifier: string;
  /** `import type`, `export type`, an `import()` type, or only type-only names. */
  typeOnly: boolean;
}

/** One layer of the order: its units (`config`, `errors`, `plugin.ts`). */
export interface Layer {
  units: string[];
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') && !path.endsWith('.d.ts') ? [path] : [];
    });
}

/** The module a relative specifier names, or undefined when it is no TypeScript module of the tree (JSON, a missing file). */
function resolveModule(fromFile: string, specifier: string): string | undefined {
  const base = join(dirname(fromFile), specifier.replace(/\.js$/, ''));
  for (const candidate of [`${base}.ts`, join(base, 'index.ts')]) if (existsSync(candidate)) return candidate;
  return undefined;
}

/** Every module specifier a source names, with whether the reference is for types only. */
export function moduleReferences(fileName: string, text: string): Array<{ specifier: string; typeOnly: boolean }> {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.ES2022, true);
  const found: Array<{ specifier: string; typeOnly: boolean }> = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const namedTypesOnly =
        !!clause &&
        !clause.name &&
        !!clause.namedBindings &&
        ts.isNamedImports(clause.namedBindings) &&
        clause.namedBindings.elements.length > 0 &&
        clause.namedBindings.elements.every((e) => e.isTypeOnly);
      found.push({ specifier: node.moduleSpecifier.text, typeOnly: !!clause && (clause.isTypeOnly || namedTypesOnly) });
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const namedTypesOnly =
        !!node.exportClause &&
        ts.isNamedExports(node.exportClause) &&
        node.exportClause.elements.length > 0 &&
        node.exportClause.elements.every((e) => e.isTypeOnly);
      found.push({ specifier: node.moduleSpecifier.text, typeOnly: node.isTypeOnly || namedTypesOnly });
    } else if (
      ts.isImportEqualsDeclaration(node) &&
      ts.isExternalModuleReference(node.moduleReference) &&
      ts.isStringLiteral(node.moduleReference.expression)
    ) {
      found.push({ specifier: node.moduleReference.expression.text, typeOnly: node.isTypeOnly });
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      found.push({ specifier: node.argument.literal.text, typeOnly: true });
    } else if (ts.isCallExpression(node) && node.arguments.length > 0 && ts.isStringLiteral(node.arguments[0]!)) {
      const callee = node.expression;
      const loads =
        callee.kind === ts.SyntaxKind.ImportKeyword ||
        (ts.isIdentifier(callee) && callee.text === 'require') ||
        (ts.isPropertyAccessExpression(callee) && ts.isIdentifier(callee.expression) && callee.expression.text === 'require' && callee.name.text === 'resolve');
      if (loads) found.push({ specifier: (node.arguments[0] as ts.StringLiteral).text, typeOnly: false });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The imports between modules of `srcDir` (packages and files outside it left out). */
export function readImports(srcDir: string): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const file of sourceFiles(srcDir)) {
    for (const ref of moduleReferences(file, readFileSync(file, 'utf8'))) {
      if (!ref.specifier.startsWith('.')) continue;
      const target = resolveModule(file, ref.specifier);
      if (!target || !target.startsWith(srcDir + sep)) continue;
      edges.push({ from: toPosix(relative(srcDir, file)), to: toPosix(relative(srcDir, target)), specifier: ref.specifier, typeOnly: ref.typeOnly });
    }
  }
  return edges;
}

function toPosix(path: string): string {
  return path.split(sep).join('/');
}

/** The unit a module belongs to: its top folder under src/, or its own name at the root (`plugin.ts`). */
export function unitOf(module: string): string {
  const slash = module.indexOf('/');
  return slash === -1 ? module : module.slice(0, slash);
}

/**
 * The layer order of a markdown text: the numbered list of its `## Layers` section, bottom first, each item's
 * backquoted units before its dash (`3. \`http\` — …`).
 */
export function parseLayers(markdown: string): Layer[] {
  const section = /^## Layers\b[^\n]*\n([\s\S]*?)(?=^## |(?![\s\S]))/m.exec(markdown);
  if (!section) throw new Error('no "## Layers" section');
  const layers: Layer[] = [];
  for (const line of section[1]!.split('\n')) {
    const item = /^\d+\.\s+(.*?)\s+—/.exec(line);
    if (!item) continue;
    const units = [...item[1]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
    if (units.length === 0) throw new Error(`layer without units: ${line}`);
    layers.push({ units });
  }
  if (layers.length === 0) throw new Error('the "## Layers" section lists no layers');
  return layers;
}

/**
 * What breaks the order: an import of a unit of a higher layer or of a sibling in the same layer, and a unit in no
 * layer. One message per import, naming the file, the import and the rule.
 */
export function layerViolations(edges: readonly ImportEdge[], layers: readonly Layer[], units: Iterable<string>): string[] {
  const levelOf = new Map<string, number>();
  layers.forEach((layer, index) => layer.units.forEach((unit) => levelOf.set(unit, index)));
  const problems: string[] = [];
  for (const unit of new Set(units)) {
    if (!levelOf.has(unit)) problems.push(`src/${unit} is in no layer of the order`);
  }
  for (const edge of edges) {
    const from = unitOf(edge.from);
    const to = unitOf(edge.to);
    if (from === to) continue;
    const fromLevel = levelOf.get(from);
    const toLevel = levelOf.get(to);
    if (fromLevel === undefined || toLevel === undefined) continue;
    if (toLevel < fromLevel) continue;
    const kind = edge.typeOnly ? 'type import' : 'import';
    const rule =
      toLevel === fromLevel
        ? `${from} and ${to} are side by side in layer ${fromLevel + 1}: neither may import the other`
        : `${from} (layer ${fromLevel + 1}) may import only layers below it; ${to} is layer ${toLevel + 1}`;
    problems.push(`src/${edge.from}: ${kind} '${edge.specifier}' (src/${edge.to}) breaks the order: ${rule}`);
  }
  return problems;
}

/** Strongly connected components with more than one node (Tarjan), each sorted, in a stable order. */
export function cyclesOf(graph: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const connect = (node: string): void => {
    index.set(node, next);
    low.set(node, next);
    next += 1;
    stack.push(node);
    onStack.add(node);
    for (const target of graph.get(node) ?? []) {
      if (!index.has(target)) {
        connect(target);
        low.set(node, Math.min(low.get(node)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node)!, index.get(target)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) components.push(component.sort());
    }
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) connect(node);
  return components.sort((a, b) => a[0]!.localeCompare(b[0]!));
}

function graphOf(pairs: Iterable<[string, string]>): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const [from, to] of pairs) {
    if (from === to) continue;
    if (!graph.has(from)) graph.set(from, new Set());
    if (!graph.has(to)) graph.set(to, new Set());
    graph.get(from)!.add(to);
  }
  return graph;
}

/** Cycles between units (folders), type imports included: each as the units in it. */
export function unitCycles(edges: readonly ImportEdge[]): string[][] {
  return cyclesOf(graphOf(edges.map((e) => [unitOf(e.from), unitOf(e.to)])));
}

/** Cycles between modules, type imports included: each as the modules in it. */
export function moduleCycles(edges: readonly ImportEdge[]): string[][] {
  return cyclesOf(graphOf(edges.map((e) => [e.from, e.to])));
}

/** The units of a tree: its folders and root files. */
export function unitsOf(srcDir: string): string[] {
  return sourceFiles(srcDir).map((file) => unitOf(toPosix(relative(srcDir, file))));
}
