// docs/api/ from the TSDoc of the package's three entry points (`sapi-temporal`, `sapi-temporal/workflows`,
// `sapi-temporal/nexus`): typedoc with typedoc-plugin-markdown, as configured in docs/typedoc.json. Markdown, so it
// reads on GitHub and a test can compare it with the checked-in copy. typedoc runs in a child process (it is an ES
// module; the scripts and jest load CommonJS) and writes into a scratch folder that is read back and removed.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(__dirname, '..', '..');
export const typedocOptions = join(root, 'docs', 'typedoc.json');
/** The folder of docs/ the API reference is written to (the `out` of docs/typedoc.json). */
export const apiFolder = 'api';

function filesUnder(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

/**
 * Each file of the API reference (`api/…`, relative to docs/) with its content. Throws with typedoc's output when it
 * reports a warning (`treatWarningsAsErrors`): a broken `{@link}`, a public type that names an unexported one, a bad
 * tag.
 */
export function renderApiReference(): Map<string, string> {
  const out = mkdtempSync(join(tmpdir(), 'sapi-api-docs-'));
  try {
    const typedoc = join(dirname(require.resolve('typedoc/package.json', { paths: [root] })), 'bin', 'typedoc');
    try {
      execFileSync(process.execPath, [typedoc, '--options', typedocOptions, '--out', out, '--logLevel', 'Warn'], {
        cwd: root,
        encoding: 'utf8',
        stdio: 'pipe',
        env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
      });
    } catch (err) {
      const { stdout = '', stderr = '' } = err as { stdout?: string; stderr?: string };
      throw new Error(`typedoc (docs/typedoc.json) failed: fix the TSDoc it names\n${`${stdout}${stderr}`.trim()}`, { cause: err });
    }
    const files = filesUnder(out).sort();
    return new Map(files.map((file) => [join(apiFolder, relative(out, file)), readFileSync(file, 'utf8')]));
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/** The files now under docs/api/ (relative to docs/), to find the ones the generator no longer writes. */
export function checkedInApiFiles(docsRoot: string): string[] {
  try {
    return filesUnder(join(docsRoot, apiFolder))
      .map((file) => relative(docsRoot, file))
      .sort();
  } catch {
    return [];
  }
}
