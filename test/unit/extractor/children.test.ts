import { planChildRuns } from '../../../src/extractor/children';
import { makeConfig } from './fake-api';

const config = makeConfig({
  jobs: [
    {
      endpoint: 'users',
      children: [
        { endpoint: 'users/{uid}/orders', placeholders: { uid: 'id' }, children: [{ endpoint: 'orders/{oid}', placeholders: { oid: 'no' } }] },
        { endpoint: 'users/{uid}/notes', placeholders: { uid: 'id' } },
      ],
    },
  ],
});
const users = config.config.jobs[0];

describe('planning child runs after a parent page', () => {
  it('orders runs by child job, then by row, with endpoints filled and parent columns', () => {
    const plan = planChildRuns(users, [{ id: 1, bio: 'long text' }, { id: 2 }], null);
    expect(plan.runs.map((r) => [r.job.endpoint, r.rowIndex, r.parentColumns])).toEqual([
      ['users/1/orders', 0, { parent_id: '1' }],
      ['users/2/orders', 1, { parent_id: '2' }],
      ['users/1/notes', 0, { parent_id: '1' }],
      ['users/2/notes', 1, { parent_id: '2' }],
    ]);
  });

  it('keeps only the fields placeholders need, never whole parent rows', () => {
    const [run] = planChildRuns(users, [{ id: 1, bio: 'long text', no: 5 }], null).runs;
    expect(run.parent.levels).toEqual([{ id: 1, no: 5 }]);
    expect(JSON.stringify(run)).not.toContain('long text');
  });

  it('passes inherited placeholders down to grandchildren', () => {
    const [ordersRun] = planChildRuns(users, [{ id: 1 }], null).runs;
    const [grandchild] = planChildRuns(ordersRun.job, [{ no: 'A-1' }], ordersRun.parent).runs;
    expect(grandchild.job.endpoint).toBe('orders/A-1');
    expect(grandchild.parentColumns).toEqual({ parent_id: '1', parent_no: 'A-1' });
  });

  it('warns about a child job without placeholders', () => {
    const bare = makeConfig({ jobs: [{ endpoint: 'a', children: [{ endpoint: 'b' }] }] }).config.jobs[0];
    expect(planChildRuns(bare, [{ id: 1 }], null).warnings).toEqual(["No 'placeholders' set for 'b'"]);
  });

  it('fails with the placeholder and level when a level does not exist', () => {
    const deep = makeConfig({ jobs: [{ endpoint: 'a', children: [{ endpoint: 'b/{3:x}', placeholders: { '3:x': 'id' } }] }] }).config.jobs[0];
    expect(() => planChildRuns(deep, [{ id: 1 }], null)).toThrow('Level 3 not found in parent results! Maximum level: 1');
  });
});
