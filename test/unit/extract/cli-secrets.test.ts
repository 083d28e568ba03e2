import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readExtractConfig } from '../../../src/cli/extract';
import { ExtractorConfigError } from '../../../src/extractor/errors';

function configFile(api: Record<string, unknown>, params: Record<string, unknown> = {}): string {
  const path = join(mkdtempSync(join(tmpdir(), 'cli-secrets-')), 'config.json');
  writeFileSync(path, JSON.stringify({ parameters: { api: { baseUrl: 'http://api.test/', ...api }, config: { jobs: [{ endpoint: 'items', params }] } } }));
  return path;
}

describe('sapi-temporal extract and secrets', () => {
  it('refuses a configuration with an API key in clear before starting anything, naming where it is and how to reference it', () => {
    const path = configFile({ http: { headers: { 'X-Api-Key': 'abc-123' } } }, { '#token': 'def-456' });
    let error: unknown;
    try {
      readExtractConfig(path);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ExtractorConfigError);
    const message = (error as ExtractorConfigError).message;
    expect((error as ExtractorConfigError).code).toBe('SAPI_EXTRACT_CONFIG_INVALID');
    expect(message.startsWith(`${path}: Invalid extractor configuration`)).toBe(true);
    expect(message).toContain('parameters.api.http.headers.X-Api-Key');
    expect(message).toContain('parameters.config.jobs[0].params.#token');
    expect(message).toContain('${env:SAPI_SECRET_NAME}');
    expect(message).not.toMatch(/abc-123|def-456/);
  });

  it('accepts the same configuration with references to the worker environment', () => {
    const path = configFile({ http: { headers: { 'X-Api-Key': '${env:SAPI_SECRET_KEY}' } } }, { '#token': '${env:SAPI_SECRET_TOKEN}' });
    expect(readExtractConfig(path)).toMatchObject({ parameters: { api: { http: { headers: { 'X-Api-Key': '${env:SAPI_SECRET_KEY}' } } } } });
  });
});
