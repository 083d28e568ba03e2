import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import {
  ERROR_CLASSES,
  ERROR_CODES,
  errorClassOf,
  httpErrorCode,
  httpStatusError,
  inContext,
  NON_RETRYABLE_ERROR_CODES,
  SapiErrorCode,
  SapiHttpError,
  SapiStorageError,
  SapiTimeoutError,
  toApplicationFailure,
} from '../../../src/errors';
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

/** Where a code is raised: by constructing a class (`new C(…)`, or `super(…)` in class C), or as an `ApplicationFailure`. */
interface Raise {
  file: string;
  line: number;
  by: string;
  code: string | undefined;
}

/** The `SapiErrorCode.X` codes written in `node`'s arguments, not inside another raise (that one counts for itself). */
function codesIn(args: readonly ts.Node[]): string[] {
  const codes: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isNewExpression(node) || (ts.isCallExpression(node) && raiseOfCall(node) !== undefined)) return;
    if (ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'SapiErrorCode') {
      codes.push(SapiErrorCode[node.name.text as keyof typeof SapiErrorCode]);
    }
    ts.forEachChild(node, visit);
  };
  args.forEach(visit);
  return codes;
}

/** `'ApplicationFailure'` for `ApplicationFailure.create/nonRetryable/retryable(…)`, `'super'` for `super(…)`. */
function raiseOfCall(node: ts.CallExpression): string | undefined {
  if (node.expression.kind === ts.SyntaxKind.SuperKeyword) return 'super';
  const callee = node.expression;
  if (ts.isPropertyAccessExpression(callee) && ts.isIdentifier(callee.expression) && callee.expression.text === 'ApplicationFailure') {
    return ['create', 'nonRetryable', 'retryable'].includes(callee.name.text) ? 'ApplicationFailure' : undefined;
  }
  return undefined;
}

/** Every raise in src/ of an error class (`…Error`) or an `ApplicationFailure`, with the codes written in it. */
function raises(): Raise[] {
  const found: Raise[] = [];
  for (const file of sources()) {
    const path = relative(src, file.fileName);
    const visit = (node: ts.Node, klass: string | undefined): void => {
      if (ts.isClassDeclaration(node) && node.name) klass = node.name.text;
      let by: string | undefined;
      let args: readonly ts.Node[] = [];
      if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && /Error$/.test(node.expression.text)) {
        by = node.expression.text;
        args = node.arguments ?? [];
      } else if (ts.isCallExpression(node)) {
        const call = raiseOfCall(node);
        by = call === 'super' ? klass : call;
        args = node.arguments;
      }
      if (by !== undefined) {
        const line = file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1;
        const codes = codesIn(args);
        if (codes.length === 0) found.push({ file: path, line, by, code: undefined });
        for (const code of codes) found.push({ file: path, line, by, code });
      }
      ts.forEachChild(node, (child) => visit(child, klass));
    };
    visit(file, undefined);
  }
  return found;
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

  it('gives every code exactly one class, and names only error classes of src/', () => {
    const listed = Object.values(ERROR_CLASSES).flat();
    expect([...listed].sort()).toEqual(Object.values(SapiErrorCode).sort());
    expect(new Set(listed).size).toBe(listed.length);
    const { declared } = errorClasses();
    const classes = Object.keys(ERROR_CLASSES).filter((name) => name !== 'ApplicationFailure' && name !== 'CliError');
    expect(classes.filter((name) => !declared.has(name))).toEqual([]);
    expect(sources().some((file) => relative(src, file.fileName) === join('cli', 'failure.ts') && file.text.includes('export class CliError '))).toBe(true);
  });

  it("raises every code through its class only: no plain SapiError, no class raising another's code, ApplicationFailure only in workflow code", () => {
    const { declared } = errorClasses();
    const isA = (name: string, owner: string): boolean => name === owner || (declared.get(name) !== undefined && isA(declared.get(name)!.base, owner));
    const all = raises();
    expect(all.filter((r) => r.by === 'CliError').length).toBeGreaterThan(5);
    const wrong = all
      .filter((r) => r.file !== 'errors.ts')
      .flatMap((r) => {
        const where = `${r.file}:${r.line}`;
        if (r.by === 'SapiError') return [`${where}: a plain SapiError (${r.code ?? 'its code from a variable'}): raise it through the class of its code`];
        if (r.code === undefined) return [];
        const owner = errorClassOf(r.code as SapiErrorCode);
        if (r.by === 'ApplicationFailure') {
          return r.file.startsWith(`workflows${'/'}`) ? [] : [`${where}: ${r.code} raised as an ApplicationFailure outside workflow code: raise a ${owner}`];
        }
        return isA(r.by, owner) ? [] : [`${where}: ${r.by} raises ${r.code}, which is ${owner}'s`];
      });
    expect(wrong).toEqual([]);
  });

  it('gives a Storage answer the code of its status: SapiHttpError for every status but 408, which is a SapiTimeoutError', () => {
    const request = { method: 'GET', path: '/v2/storage/tables/in.c-a.t' };
    for (let status = 400; status < 600; status++) {
      if (status === 408) continue;
      const err = httpStatusError({ request, status, serviceCode: status === 400 ? 'storage.tables.alreadyExists' : undefined });
      expect(err).toBeInstanceOf(SapiHttpError);
      expect(err).toBeInstanceOf(SapiStorageError);
      expect(ERROR_CLASSES.SapiStorageError).toContain(err.code);
      expect(err.code).toBe(httpErrorCode(status, status === 400 ? 'storage.tables.alreadyExists' : undefined));
    }
    const timeout = httpStatusError({ request, status: 408, exceptionId: 'exception-1' });
    expect(timeout).toBeInstanceOf(SapiTimeoutError);
    expect(timeout).toMatchObject({ code: SapiErrorCode.TIMEOUT, status: 408, retryable: true, exceptionId: 'exception-1' });
    expect(timeout.message).toBe('GET /v2/storage/tables/in.c-a.t failed: 408: the service timed out waiting for the request [exceptionId=exception-1]');
    expect(() => new SapiHttpError({ request, status: 408 })).toThrow(/SapiTimeoutError/);
  });

  it('keeps the class and code of an error a step adds its context to (inContext)', () => {
    const request = { method: 'POST', path: '/v2/storage/tables/in.c-a.t/metadata' };
    const original = new SapiHttpError({ request, status: 404, serviceCode: 'storage.tables.notFound', exceptionId: 'exception-2' });
    const wrapped = inContext(original, 'setting metadata on table in.c-a.t failed', { tableId: 'in.c-a.t' });
    expect(wrapped).toBeInstanceOf(SapiHttpError);
    expect(wrapped).toMatchObject({
      code: SapiErrorCode.NOT_FOUND,
      status: 404,
      exceptionId: 'exception-2',
      message: 'setting metadata on table in.c-a.t failed',
    });
    expect(wrapped.cause).toBe(original);
    expect(wrapped.details).toEqual({ method: 'POST', path: '/v2/storage/tables/in.c-a.t/metadata', tableId: 'in.c-a.t' });
    expect(original.message).toMatch(/^POST \/v2\/storage\/tables\/in\.c-a\.t\/metadata failed: 404/);
    expect(toApplicationFailure(wrapped)).toMatchObject({
      type: SapiErrorCode.NOT_FOUND,
      nonRetryable: true,
      message: 'setting metadata on table in.c-a.t failed',
    });
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
