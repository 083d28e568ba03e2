/**
 * The JSON parser's parity with the reference across pages and child jobs, through the plain loop (the durable
 * path uses the same `processPage` and `mergeTableSchema`).
 */
import { runExtraction } from '../../harness/run-extraction';
import { fakeFetch, makeConfig } from './fake-api';

describe('tables across pages, as the reference builds them', () => {
  it("keeps a nested object's key that a later page adds next to its siblings, and parent links last", async () => {
    const config = makeConfig({
      pagination: { method: 'response.param', responseParam: 'next', queryParam: 'page' },
      jobs: [{ endpoint: 'users', dataField: 'items' }],
    });
    const result = await runExtraction(config, {
      fetchPage: fakeFetch([
        { items: [{ id: 1, p: { a: 'x' }, tags: [{ t: 1 }] }], next: '2' },
        { items: [{ id: 2, p: { b: 'y' }, q: true, tags: [{ t: 2, u: 3 }] }], next: null },
      ]),
    });
    expect(result.tables.users.columns).toEqual(['id', 'p_a', 'p_b', 'tags', 'q']);
    expect(result.tables.users_tags.columns).toEqual(['t', 'u', 'JSON_parentId']);
    expect(result.tables.users_tags.rows.map((r) => [r.t, r.u, r.JSON_parentId])).toEqual([
      ['1', '', result.tables.users.rows[0].tags],
      ['2', '3', result.tables.users.rows[1].tags],
    ]);
  });

  it("hashes a child job's parent values as decoded (a number stays a number), like the reference", async () => {
    const config = makeConfig({
      jobs: [{ endpoint: 'users', children: [{ endpoint: 'users/{id}/orders', dataType: 'orders', placeholders: { id: 'id' } }] }],
    });
    const result = await runExtraction(config, {
      fetchPage: fakeFetch([[{ id: 7 }], [{ n: 1, lines: ['a'] }]]),
    });
    expect(result.tables.orders.columns).toEqual(['n', 'lines', 'parent_id']);
    // md5('O:8:"stdClass":3:{s:1:"n";i:1;s:5:"lines";a:1:{i:0;s:1:"a";}s:9:"parent_id";i:7;}')
    expect(result.tables.orders.rows[0].lines).toBe('orders_f19ac81f8a17761d840d7f0321bae2db');
  });
});
