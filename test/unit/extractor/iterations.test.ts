/**
 * `parameters.iterations`: the configuration runs once per iteration, in order, with the iteration's keys
 * replacing those of `parameters.config` (the reference's `array_replace`), into the same tables.
 */
import { parseExtractorConfig } from '../../../src/extractor/config-schema';
import { iterationConfigs } from '../../../src/extractor/config-iterations';
import { runExtraction } from '../../harness/run-extraction';
import { findClearSecrets } from '../../../src/extractor/secrets';
import type { RequestDescriptor } from '../../../src/extractor/types';
import { BASE_URL, describeRequest, page } from './fake-api';

const withIterations = (config: Record<string, unknown>, iterations: unknown, extra: Record<string, unknown> = {}) =>
  parseExtractorConfig({ parameters: { api: { baseUrl: BASE_URL }, config: { outputBucket: 'test', ...config }, iterations, ...extra } });

describe('parameters.iterations', () => {
  it('runs the jobs once per iteration, in order, with its attributes in params and userData, into one table', async () => {
    const config = withIterations(
      {
        userData: { account: { attr: 'accountId' } },
        http: { headers: { 'X-Region': 'eu' } },
        jobs: [{ endpoint: 'users', params: { account_id: { attr: 'accountId' } } }],
      },
      [{ accountId: 345 }, { accountId: 456, http: { headers: { 'X-Region': 'us' } } }],
    );
    const seen: string[] = [];
    const bodies = [[{ id: 5, name: 'Jimmy' }], [{ id: 7, name: 'Janet', extra: true }]];
    const result = await runExtraction(config, {
      fetchPage: async (request: RequestDescriptor) => {
        seen.push(`${describeRequest(request)} X-Region=${request.headers['X-Region']}`);
        return page(bodies[seen.length - 1]);
      },
    });
    expect(seen).toEqual(['GET /v1/users?account_id=345 X-Region=eu', 'GET /v1/users?account_id=456 X-Region=us']);
    expect(result.tables.users.columns).toEqual(['id', 'name', 'extra', 'account']); // user data columns stay last
    expect(result.tables.users.rows).toEqual([
      { id: '5', name: 'Jimmy', account: '345', extra: '' },
      { id: '7', name: 'Janet', account: '456', extra: '1' },
    ]);
  });

  it("replaces a whole parameters.config key (a shallow merge): an iteration's http drops the other config headers", () => {
    const config = withIterations({ http: { headers: { A: '1', B: '2' } }, jobs: [{ endpoint: 'users' }] }, [{ http: { headers: { B: '3' } } }]);
    expect(iterationConfigs(config).map((c) => c.api.http.headers)).toEqual([{ B: '3' }]);
  });

  it('treats an empty list as no iterations', () => {
    const config = withIterations({ jobs: [{ endpoint: 'users' }] }, []);
    expect(config.iterations).toBeUndefined();
    expect(iterationConfigs(config)).toEqual([config]);
  });

  it('refuses iterations that are not a list of objects, or that change what all tables are loaded with, naming the key', () => {
    expect(() => withIterations({ jobs: [{ endpoint: 'users' }] }, { a: 1 })).toThrow(/parameters\.iterations: 'iterations' must be an array of objects/);
    expect(() => withIterations({ jobs: [{ endpoint: 'users' }] }, [{}, 5])).toThrow(/parameters\.iterations\[1\]: an iteration must be an object/);
    expect(() => withIterations({ jobs: [{ endpoint: 'users' }] }, [{ outputBucket: 'other' }])).toThrow(
      /parameters\.iterations\[0\]\.outputBucket: an iteration may not change 'outputBucket'/,
    );
    expect(() => withIterations({ jobs: [{ endpoint: 'users' }] }, [{ incrementalOutput: true }])).toThrow(/parameters\.iterations\[0\]\.incrementalOutput/);
  });

  it('names the iteration when its merged configuration is invalid (an attribute only another iteration sets)', () => {
    expect(() => withIterations({ jobs: [{ endpoint: 'users', params: { a: { attr: 'accountId' } } }] }, [{ accountId: 1 }, { other: 2 }])).toThrow(
      /parameters\.config\.jobs\[0\]\.params\.a: User script error: Error evaluating user function - attr 'accountId' not found! \(in parameters\.iterations\[1\], merged over 'parameters\.config'\)/,
    );
  });

  it('refuses a key the extractor does not read in an iteration, naming it and the iteration', () => {
    expect(() => withIterations({ jobs: [{ endpoint: 'users' }] }, [{ http: { header: { A: '1' } } }])).toThrow(
      /parameters\.config\.http\.header: 'config\.http\.header' is not supported \(known: headers\)\. \(in parameters\.iterations\[0\], merged over 'parameters\.config'\)/,
    );
  });

  it('refuses a secret in clear in an iteration like anywhere else (the policy scans the whole configuration)', () => {
    expect(
      findClearSecrets({
        parameters: { iterations: [{ '#password': 'TopSecret', http: { headers: { 'X-Api-Token': 'abc' } } }, { '#password': '${env:SAPI_SECRET_P}' }] },
      }),
    ).toEqual(['parameters.iterations[0].#password', 'parameters.iterations[0].http.headers.X-Api-Token']);
  });
});
