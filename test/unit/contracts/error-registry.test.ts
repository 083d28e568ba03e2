import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ERROR_CODES, ErrorCode, NON_RETRYABLE_ERROR_CODES } from '../../../src/errors/codes';
import { SAPI_ERROR_CODES, SapiErrorCode } from '../../../src/errors';
import { ExtractorErrorCode } from '../../../src/extractor/errors';
import { renderErrorTable } from '../../../scripts/gen-docs/errors';

describe('the error registry', () => {
  it('is the one list of codes: the Storage, extractor and CLI codes all come from it, with one naming scheme', () => {
    expect(Object.values(ErrorCode).sort()).toEqual(Object.keys(ERROR_CODES).sort());
    expect([...SAPI_ERROR_CODES].sort()).toEqual(Object.keys(ERROR_CODES).sort());
    expect(SapiErrorCode).toBe(ErrorCode);
    for (const code of Object.values(ExtractorErrorCode)) expect(ERROR_CODES[code]).toBeDefined();
    for (const code of Object.values(ErrorCode)) expect(code).toMatch(/^SAPI_[A-Z]+(_[A-Z]+)*$/);
    for (const code of Object.values(ExtractorErrorCode)) expect(code).toMatch(/^SAPI_EXTRACT_/);
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
