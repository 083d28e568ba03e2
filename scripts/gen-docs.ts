// Writes the generated references of docs/ (`npm run docs`): the CLI reference from the command definitions, the
// configuration reference from the code that reads the settings, the error table from the error registry, and the
// API reference (docs/api/) from the TSDoc with typedoc (`npm run docs:api` writes only that one).
// `npm run docs -- --check` writes nothing and exits 1 when a checked-in file differs (test/unit/docs does the same).
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { checkedInApiFiles, renderApiReference } from './gen-docs/api';
import { renderCliReference } from './gen-docs/cli';
import { renderConfigurationReference } from './gen-docs/configuration';
import { renderErrorsReference } from './gen-docs/errors';

export const docsRoot = resolve(__dirname, '..', 'docs');

/** Each generated file of docs/ (relative name) with the content the generator gives it now. */
export function generatedDocs(warnings: string[] = []): Map<string, string> {
  return new Map([
    ['cli.md', renderCliReference()],
    ['configuration.md', renderConfigurationReference(warnings)],
    ['errors.md', renderErrorsReference()],
  ]);
}

/** The generated files whose checked-in copy differs from what the generator gives. */
export function staleDocs(docs: Map<string, string> = generatedDocs()): string[] {
  return [...docs]
    .filter(([name, content]) => {
      try {
        return readFileSync(join(docsRoot, name), 'utf8') !== content;
      } catch {
        return true;
      }
    })
    .map(([name]) => name);
}

/** The checked-in files of docs/api/ the API reference no longer has (a removed export, a renamed module). */
export function leftoverApiDocs(api: Map<string, string>): string[] {
  return checkedInApiFiles(docsRoot).filter((name) => !api.has(name));
}

if (require.main === module) {
  const warnings: string[] = [];
  const apiOnly = process.argv.includes('--api');
  const docs = apiOnly ? new Map<string, string>() : generatedDocs(warnings);
  const api = renderApiReference();
  for (const warning of warnings) process.stderr.write(`gen-docs: ${warning}\n`);
  const all = new Map([...docs, ...api]);
  if (process.argv.includes('--check')) {
    const stale = [...staleDocs(all), ...leftoverApiDocs(api)];
    for (const name of stale) process.stderr.write(`gen-docs: docs/${name} is out of date: run npm run docs\n`);
    process.exitCode = stale.length ? 1 : 0;
  } else {
    for (const name of leftoverApiDocs(api)) rmSync(join(docsRoot, name));
    for (const [name, content] of all) {
      mkdirSync(dirname(join(docsRoot, name)), { recursive: true });
      writeFileSync(join(docsRoot, name), content);
    }
    process.stdout.write(`gen-docs: wrote ${[...all.keys()].map((name) => `docs/${name}`).join(', ')}\n`);
  }
}
