import { parseExtractorConfig } from '../../../src/extractor/config-schema';
import { runExtraction } from '../../../src/extractor/run-loop';
import { BASE_URL, fakeFetch } from './fake-api';

function configWith(config: Record<string, unknown>) {
  return parseExtractorConfig({ parameters: { api: { baseUrl: BASE_URL }, config: { outputBucket: 'test', ...config } } });
}

describe('userData: columns added to the root rows of every top-level job', () => {
  it('adds parameters.config.userData after the record columns of top-level jobs, not to child jobs or child tables', async () => {
    const config = configWith({
      userData: { tag: 'dev', price: 10 },
      jobs: [
        { endpoint: 'users', children: [{ endpoint: 'users/{id}', dataType: 'detail', dataField: '.', placeholders: { id: 'id' } }] },
        { endpoint: 'orders' },
      ],
    });
    const result = await runExtraction(config, {
      fetchPage: fakeFetch([[{ id: 1, roles: ['a'] }], { id: 1, name: 'A' }, [{ order: 9 }]]),
    });
    expect(result.tables.users.columns).toEqual(['id', 'roles', 'tag', 'price']);
    expect(result.tables.users.rows[0]).toMatchObject({ id: '1', tag: 'dev', price: '10' });
    expect(result.tables.users_roles.columns).toEqual(['data', 'JSON_parentId']);
    expect(result.tables.detail.rows).toEqual([{ id: '1', name: 'A', parent_id: '1' }]);
    expect(result.tables.orders.rows).toEqual([{ order: '9', tag: 'dev', price: '10' }]);
  });

  it("merges a job's own userData over the configuration's; a scalar is named userData / job_parent_id", async () => {
    const config = configWith({
      userData: 'run-1',
      jobs: [
        { endpoint: 'users', userData: { src: 'api' }, children: [{ endpoint: 'users/{id}', dataField: '.', placeholders: { id: 'id' }, userData: 'kid' }] },
      ],
    });
    const result = await runExtraction(config, { fetchPage: fakeFetch([[{ id: 1 }], { id: 1 }]) });
    expect(result.tables.users.rows).toEqual([{ id: '1', userData: 'run-1', src: 'api' }]);
    expect(result.tables.users_id.rows).toEqual([{ id: '1', job_parent_id: 'kid', parent_id: '1' }]);
  });
});
