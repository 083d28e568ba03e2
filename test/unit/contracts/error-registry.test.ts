import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ERROR_CODES, ErrorCode, NON_RETRYABLE_ERROR_CODES } from '../../../src/contracts/error-codes';
import { SAPI_ERROR_CODES, SapiErrorCode } from '../../../src/errors';
import { ExtractorErrorCode } from '../../../src/extractor/errors';

/** The README's "Errors" table as the registry renders it. */
function renderErrorTable(): string {
  const rows = Object.entries(ERROR_CODES).map(([code, info]) => `| \`${code}\` | ${info.retryable ? 'yes' : 'never'} | ${info.meaning} |`);
  return ['| code | retried | meaning |', '|---|---|---|', ...rows].join('\n');
}

describe('the error registry', () => {
  it('is the one list of codes: the Storage, extractor and CLI codes all come from it, with one naming scheme', () => {
    expect(Object.values(ErrorCode).sort()).toEqual(Object.keys(ERROR_CODES).sort());
    expect([...SAPI_ERROR_CODES].sort()).toEqual(Object.keys(ERROR_CODES).sort());
    expect(SapiErrorCode).toBe(ErrorCode);
    for (const code of Object.values(ExtractorErrorCode)) expect(ERROR_CODES[code]).toBeDefined();
    for (const code of Object.values(ErrorCode)) expect(code).toMatch(/^SAPI_[A-Z]+(_[A-Z]+)*$/);
    for (const code of Object.values(ExtractorErrorCode)) expect(code).toMatch(/^SAPI_EXTRACT_/);
  });

  it('never retries what it says is not worth retrying, and still recognises the legacy extractor code', () => {
    for (const [code, info] of Object.entries(ERROR_CODES)) expect(NON_RETRYABLE_ERROR_CODES.includes(code)).toBe(!info.retryable);
    expect(NON_RETRYABLE_ERROR_CODES).toContain('SAPI_EXTRACTOR_CONFIG_INVALID');
  });

  it("is what the README's Errors table says (regenerate the table from the registry when this fails)", () => {
    const readme = readFileSync(join(__dirname, '..', '..', '..', 'README.md'), 'utf8');
    const table = renderErrorTable();
    if (!readme.includes(table)) process.stderr.write(`README "Errors" table should be:\n${table}\n`);
    expect(readme.includes(table)).toBe(true);
  });
});
