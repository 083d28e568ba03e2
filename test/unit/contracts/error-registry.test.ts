import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { ERROR_CODES, NON_RETRYABLE_ERROR_CODES, SapiErrorCode } from '../../../src/errors';
import { renderErrorTable } from '../../../scripts/gen-docs/errors';

const src = join(__dirname, '../../../src');

function parse(dir: string): ts.SourceFile[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return parse(path);
    return path.endsWith('.ts') ? [ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.ES2022, true)] : [];
  });
}

let parsed: ts.SourceFile[] | undefined;
/** The modules of src/, parsed once. */
function sources(): ts.SourceFile[] {
  return (parsed ??= parse(src));
}

/** Every error class of src/ (a class extending `SapiError`, directly or not) with its file and base, and the classes constructed with `new`. */
function errorClasses(): { declared: Map<string, { file: string; base: string }>; constructed: Set<string> } {
  const extendsOf = new Map<string, { file: string; base: string }>();
  const constructed = new Set<string>();
  for (const file of sources()) {
    const visit = (node: ts.Node): void => {
      if (ts.isClassDeclaration(node) && node.name) {
        const base = node.heritageClauses?.find((h) => h.token === ts.SyntaxKind.ExtendsKeyword)?.types[0]?.expression;
        if (base && ts.isIdentifier(base)) extendsOf.set(node.name.text, { file: relative(src, file.fileName), base: base.text });
      }
      if (ts.isNewExpression(node) && ts.isIdentifier(node.expression)) constructed.add(node.expression.text);
      ts.forEachChild(node, visit);
    };
    visit(file);
  }
  const isError = (name: string, seen = new Set<string>()): boolean => {
    if (name === 'SapiError') return true;
    const entry = extendsOf.get(name);
    return !!entry && !seen.has(name) && isError(entry.base, seen.add(name));
  };
  const declared = new Map([...extendsOf].filter(([name]) => isError(name)));
  declared.set('SapiError', { file: 'errors.ts', base: 'Error' });
  return { declared, constructed };
}

describe('the error registry', () => {
  it('is the one list of codes: the Storage, extractor and CLI codes all come from it, with one naming scheme', () => {
    expect(Object.values(SapiErrorCode).sort()).toEqual(Object.keys(ERROR_CODES).sort());
    for (const code of Object.values(SapiErrorCode)) expect(code).toMatch(/^SAPI_[A-Z]+(_[A-Z]+)*$/);
  });

  it('has no second name for the codes: no module of src/ defines a table of them beside SapiErrorCode', () => {
    const aliases: string[] = [];
    for (const file of sources()) {
      const visit = (node: ts.Node): void => {
        if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer) {
          let init: ts.Expression = node.initializer;
          while (ts.isAsExpression(init) || ts.isSatisfiesExpression(init) || ts.isParenthesizedExpression(init)) init = init.expression;
          const isCode = (e: ts.Expression) => ts.isPropertyAccessExpression(e) && ts.isIdentifier(e.expression) && e.expression.text === 'SapiErrorCode';
          const table =
            ts.isObjectLiteralExpression(init) &&
            init.properties.length > 0 &&
            init.properties.every((p) => ts.isPropertyAssignment(p) && isCode(p.initializer));
          if ((ts.isIdentifier(init) && init.text === 'SapiErrorCode') || table) aliases.push(`${relative(src, file.fileName)}: ${node.name.text}`);
        }
        ts.forEachChild(node, visit);
      };
      visit(file);
    }
    expect(aliases).toEqual([]);
  });

  it('has no error class that nothing raises: every SapiError class of src/ is constructed there, or is the base of one that is', () => {
    const { declared, constructed } = errorClasses();
    expect(declared.size).toBeGreaterThan(10);
    const raised = (name: string): boolean => constructed.has(name) || [...declared].some(([sub, entry]) => entry.base === name && raised(sub));
    expect([...declared].filter(([name]) => !raised(name)).map(([name, entry]) => `${entry.file}: ${name}`)).toEqual([]);
  });

  it('never retries what it says is not worth retrying, and nothing else', () => {
    for (const [code, info] of Object.entries(ERROR_CODES)) expect(NON_RETRYABLE_ERROR_CODES.includes(code)).toBe(!info.retryable);
    expect(NON_RETRYABLE_ERROR_CODES).toHaveLength(Object.values(ERROR_CODES).filter((info) => !info.retryable).length);
  });

  it('is what the table of docs/errors.md says (regenerate it with `npm run docs` when this fails)', () => {
    const errors = readFileSync(join(__dirname, '..', '..', '..', 'docs', 'errors.md'), 'utf8');
    const table = renderErrorTable();
    if (!errors.includes(table)) process.stderr.write(`docs/errors.md table should be:\n${table}\n`);
    expect(errors.includes(table)).toBe(true);
    for (const code of Object.keys(ERROR_CODES)) expect(errors).toContain(`| \`${code}\` |`);
  });
});
