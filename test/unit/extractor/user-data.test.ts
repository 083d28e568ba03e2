import { createHash } from 'node:crypto';
import { parseExtractorConfig } from '../../../src/extractor/config-schema';
import { runExtraction } from '../../harness/run-extraction';
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

// user functions in userData
describe('userData with user functions: evaluated when each job run starts', () => {
  const at = (iso: string) => Date.parse(iso);

  it('gives date() the job run\'s start and {"time": "currentStart"} the run\'s start, per top-level job', async () => {
    const config = configWith({
      userData: {
        now: { function: 'date', args: ['Y-m-d H:i:s'] },
        run: { function: 'date', args: ['Y-m-d H:i:s', { time: 'currentStart' }] },
        fixed: { function: 'date', args: ['Y-m-d', 1492674974] },
      },
      jobs: [{ endpoint: 'users' }, { endpoint: 'orders' }],
    });
    const clock = [at('2017-04-20T15:53:50Z'), at('2017-04-20T15:53:50.500Z'), at('2017-04-20T15:53:52Z'), at('2017-04-20T15:53:53Z')];
    const result = await runExtraction(config, {
      fetchPage: fakeFetch([[{ id: 1 }], [{ order: 9 }]]),
      now: () => clock.shift()!,
      runTimes: { previousStart: 0, currentStart: at('2017-04-20T15:53:49Z') / 1000 },
    });
    expect(result.tables.users.rows).toEqual([{ id: '1', now: '2017-04-20 15:53:50', run: '2017-04-20 15:53:49', fixed: '2017-04-20' }]);
    expect(result.tables.orders.rows).toEqual([{ order: '9', now: '2017-04-20 15:53:52', run: '2017-04-20 15:53:49', fixed: '2017-04-20' }]);
  });

  it("reads attributes and finishes hashing calls (md5 of an attribute), in the job's own userData too", async () => {
    const config = configWith({
      account: 'acme',
      jobs: [
        {
          endpoint: 'users',
          userData: { acc: { attr: 'account' }, sig: { function: 'md5', args: [{ function: 'concat', args: [{ attr: 'account' }, '-x'] }] } },
        },
      ],
    });
    const result = await runExtraction(config, { fetchPage: fakeFetch([[{ id: 1 }]]) });
    expect(result.tables.users.rows).toEqual([{ id: '1', acc: 'acme', sig: createHash('md5').update('acme-x').digest('hex') }]);
  });

  it('refuses an unknown function, a missing attribute and a secret reference, naming the key', () => {
    expect(() => configWith({ userData: { a: { function: 'rand', args: [] } }, jobs: [{ endpoint: 'users' }] })).toThrow(
      /parameters\.config\.userData\.a: User script error: Illegal function 'rand'/,
    );
    expect(() => configWith({ jobs: [{ endpoint: 'users', userData: { b: { attr: 'nope' } } }] })).toThrow(
      /parameters\.config\.jobs\[0\]\.userData\.b: .*attr 'nope' not found/,
    );
    expect(() => configWith({ userData: { c: { function: 'md5', args: ['${env:SAPI_SECRET_X}'] } }, jobs: [{ endpoint: 'users' }] })).toThrow(
      /parameters\.config\.userData\.c: 'userData\.c' must not reference a secret/,
    );
    expect(() => configWith({ userData: { e: { function: 'ifempty', args: ['a'] } }, jobs: [{ endpoint: 'users' }] })).toThrow(
      /parameters\.config\.userData\.e: User script error: Bad argument count for function 'ifempty'!/,
    );
    expect(() => configWith({ userData: { d: { nested: 1 } }, jobs: [{ endpoint: 'users' }] })).toThrow(
      /parameters\.config\.userData\.d: 'userData\.d' must be a string, number, boolean, null or a user function/,
    );
  });
});
