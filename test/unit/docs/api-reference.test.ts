/**
 * The API reference (docs/api/) is what typedoc makes of the TSDoc of the package's entry points, with every
 * warning an error: a `{@link}` that resolves nowhere, a public signature naming a type the package does not export,
 * or an export whose docs changed without `npm run docs:api` fails here.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { docsRoot, leftoverApiDocs } from '../../../scripts/gen-docs';
import { renderApiReference, typedocOptions } from '../../../scripts/gen-docs/api';

// typedoc reads the whole program: ~20 s of CPU, a minute or more on a loaded 2-core machine
const TYPEDOC_TIMEOUT_MS = 300_000;

describe('the API reference', () => {
  let api: Map<string, string>;

  beforeAll(() => {
    api = renderApiReference(); // throws with typedoc's warnings
  }, TYPEDOC_TIMEOUT_MS);

  it('is generated with warnings as errors, broken links and unexported types included', () => {
    const options = JSON.parse(readFileSync(typedocOptions, 'utf8'));
    expect(options).toMatchObject({ treatWarningsAsErrors: true, validation: { notExported: true, invalidLink: true } });
  });

  it('covers the three entry points of the package', () => {
    expect([...api.keys()].sort()).toEqual(['api/README.md', 'api/index.md', 'api/nexus.md', 'api/workflows.md']);
    expect(api.get('api/index.md')).toContain('### SapiPlugin');
    expect(api.get('api/index.md')).toContain('### executeImport()');
    expect(api.get('api/workflows.md')).toContain('### importTableWorkflow()');
  });

  it('docs/api/ is what `npm run docs:api` writes (run it and commit the result when this fails)', () => {
    for (const [name, content] of api) expect({ name, content: readFileSync(join(docsRoot, name), 'utf8') }).toEqual({ name, content });
    expect(leftoverApiDocs(api)).toEqual([]);
  });
});
