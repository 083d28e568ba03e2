/**
 * The examples (examples/<scenario>/*.ts) and the README's snippets compile under `tsc --init`'s defaults in an ESM
 * project (examples/tsconfig.json, examples/package.json) against the package's public API: `sapi-temporal` and
 * `sapi-temporal/workflows` resolve to the sources of their entry points, so a change of that API that breaks
 * them fails here. docs/using.md repeats the README's snippets: the same text.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ts from 'typescript';

const repoRoot = resolve(__dirname, '..', '..', '..');
const examplesRoot = join(repoRoot, 'examples');

/** The snippets marked `<!-- consumer-test: <file> -->` in a markdown file, by file name. */
function snippets(file: string): Map<string, string> {
  const text = readFileSync(join(repoRoot, file), 'utf8');
  return new Map([...text.matchAll(/^<!-- consumer-test: (\S+) -->\n```ts\n([\s\S]*?)^```$/gm)].map((m) => [m[1]!, m[2]!]));
}

function exampleFiles(): string[] {
  return readdirSync(examplesRoot, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && !['node_modules', 'dist'].includes(entry.name))
    .flatMap((dir) => readdirSync(join(examplesRoot, dir.name)).filter((name) => name.endsWith('.ts')).map((name) => join(examplesRoot, dir.name, name)));
}

/** Type-checks `files` (real) and `virtual` (path → text) with examples/tsconfig.json; the diagnostics of those files. */
function compile(files: string[], virtual: Map<string, string>): string[] {
  const configFile = ts.readConfigFile(join(examplesRoot, 'tsconfig.json'), ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(configFile.config, ts.sys, examplesRoot);
  const options: ts.CompilerOptions = {
    ...parsed.options,
    // `tsc --init`'s value (examples/tsconfig.json turns it off until the known case below is fixed in src/config)
    exactOptionalPropertyTypes: true,
    noEmit: true,
    paths: { 'sapi-temporal': [join(repoRoot, 'src', 'index.ts')], 'sapi-temporal/workflows': [join(repoRoot, 'src', 'workflows', 'index.ts')] },
  };
  const host = ts.createCompilerHost(options);
  const { fileExists, readFile, getSourceFile } = host;
  host.fileExists = (name) => virtual.has(name) || fileExists.call(host, name);
  host.readFile = (name) => virtual.get(name) ?? readFile.call(host, name);
  host.getSourceFile = (name, language, ...rest) => {
    const text = virtual.get(name);
    return text !== undefined ? ts.createSourceFile(name, text, language) : getSourceFile.call(host, name, language, ...rest);
  };
  const ours = new Set([...files, ...virtual.keys()]);
  const program = ts.createProgram([...ours], options, host);
  // only our files' diagnostics: checking the whole of src/ under these options would take minutes
  return [...ours]
    .flatMap((name) => {
      const file = program.getSourceFile(name);
      return file ? [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)] : [];
    })
    .map((d) => `${d.file!.fileName.replace(`${repoRoot}/`, '')}:${d.file!.getLineAndCharacterOfPosition(d.start ?? 0).line + 1}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
}

describe('the examples and the README snippets', () => {
  it('has one folder per scenario', () => {
    const folders = new Set(exampleFiles().map((file) => file.slice(examplesRoot.length + 1).split('/')[0]));
    expect([...folders].sort()).toEqual(['export', 'extract', 'import', 'own-worker', 'schedule']);
  });

  it('docs/using.md shows the README snippets as they are', () => {
    const readme = snippets('README.md');
    expect([...readme.keys()]).toEqual(['worker.ts', 'workflows.ts', 'start.ts']);
    expect(snippets('docs/using.md')).toEqual(readme);
  });

  it("compile under tsc --init's defaults in an ESM project", () => {
    // the snippets as files of a folder of the examples project (so its package.json and node_modules apply)
    const virtual = new Map([...snippets('README.md')].map(([name, code]) => [join(examplesRoot, 'readme-snippets', name), code]));
    expect(compile(exampleFiles(), virtual)).toEqual([]);
  });
});
