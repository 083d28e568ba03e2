/**
 * Transpiles the TypeScript sources (`src/**`, `test/harness/**`) to CommonJS under `outDir`, ahead of time and
 * without type checking, so the worker runs as it would in production (plain JS) instead of under the
 * `ts-register` hook, which keeps the TypeScript compiler (~50 MB) in the process and would inflate its RSS.
 * The output resolves packages through `NODE_PATH=<repo>/node_modules`.
 */
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import ts from 'typescript';

/** Transpiles every `.ts` (not `.d.ts`) under each of `roots` (relative to `repoRoot`) into `outDir`; returns the file count. */
export function transpileTree(repoRoot: string, roots: readonly string[], outDir: string): number {
  let count = 0;
  const visit = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (name === 'node_modules') continue;
      if (statSync(path).isDirectory()) visit(path);
      else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) {
        const { outputText } = ts.transpileModule(readFileSync(path, 'utf8'), {
          fileName: path,
          compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true, sourceMap: false },
        });
        const target = join(outDir, relative(repoRoot, path)).replace(/\.ts$/, '.js');
        mkdirSync(dirname(target), { recursive: true });
        writeFileSync(target, outputText);
        count++;
      } else if (name.endsWith('.json')) {
        const target = join(outDir, relative(repoRoot, path));
        mkdirSync(dirname(target), { recursive: true });
        writeFileSync(target, readFileSync(path));
      }
    }
  };
  for (const root of roots) visit(join(repoRoot, root));
  return count;
}
