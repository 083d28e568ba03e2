/**
 * Comments explain what the code does, not which branch brought it: no marker named after a branch of the past
 * (`ge-` and a branch's name: iter, state, …) in src/ or test/, and no issue number in a comment of src/ (the commit says why).
 * `ge-examples` is a real folder, and names that merely end like a marker (`storage-api`, `page-loop`) are not markers.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = join(__dirname, '../../..');

/** The branch names whose markers were rewritten as plain explanations. */
const BRANCHES = [
  'iter',
  'state',
  'features',
  'api',
  'functions',
  'legacy',
  'loop',
  'store',
  'blob',
  'json',
  'fetching',
  'types',
  'mode',
  'group',
  'safe',
  'parser',
  'token',
  'flag',
  'checkpoint',
  'checkpoints',
  'pagination',
  'durable',
  'load',
];
/** `ge-<branch>` as a word of its own: not inside `storage-api`, `page-loop` or `ge-parser-memory`. */
const BRANCH_MARKER = new RegExp(`(?<![\\w-])ge-(${BRANCHES.join('|')})(?![\\w-])`);
/** An issue number in a comment: `(issue 42)`, `issue #42`. */
const ISSUE_NUMBER = /\/[/*].*\bissue #?\d+|^\s*\*.*\bissue #?\d+/i;

/** Every text source under `dir` (TypeScript, JavaScript, Markdown), fixtures' JSON excluded. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.(ts|js|md)$/.test(e.name))
    .map((e) => join(e.parentPath, e.name));
}

/** `path:line: text` of every line of `files` that `pattern` matches. */
function hits(files: string[], pattern: RegExp): string[] {
  return files.flatMap((file) =>
    readFileSync(file, 'utf8')
      .split('\n')
      .flatMap((line, i) => (pattern.test(line) ? [`${relative(root, file)}:${i + 1}: ${line.trim()}`] : [])),
  );
}

describe('comments carry no branch markers or issue numbers', () => {
  it('the patterns catch a marker and an issue number, and leave real names alone (a check on the checks)', () => {
    const marker = (branch: string) => `  // ${'ge'}-${branch}: the run's times`;
    expect(BRANCH_MARKER.test(marker('state'))).toBe(true);
    expect(BRANCH_MARKER.test(`  // --- ${'ge'}-iter (begin) ---`)).toBe(true);
    expect(BRANCH_MARKER.test(`x, // ${'ge'}-legacy`)).toBe(true);
    for (const name of ['../storage-api', 'page-loop thread', 'test/harness/ge-examples', 'ge-parser-memory.test.ts', 'page-checkpoints']) {
      expect(BRANCH_MARKER.test(name)).toBe(false);
    }
    expect(ISSUE_NUMBER.test('// Load receipts (issue 42): one row')).toBe(true);
    expect(ISSUE_NUMBER.test(' * Components (issue 26 item 4): kept')).toBe(true);
    expect(ISSUE_NUMBER.test("const issues = ['a'];")).toBe(false);
  });

  it('no line of src/ or test/ carries a marker named after a branch', () => {
    expect(hits([...sources(join(root, 'src')), ...sources(join(root, 'test'))], BRANCH_MARKER)).toEqual([]);
  });

  it('no comment of src/ names an issue number', () => {
    expect(hits(sources(join(root, 'src')), ISSUE_NUMBER)).toEqual([]);
  });
});
