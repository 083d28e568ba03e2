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

  it('warns about a child job without placeholders and, like the reference, runs it for no row', () => {
    const bare = makeConfig({ jobs: [{ endpoint: 'a', children: [{ endpoint: 'b' }] }] }).config.jobs[0];
    expect(planChildRuns(bare, [{ id: 1 }], null)).toEqual({ runs: [], warnings: ["No 'placeholders' set for 'b'"] });
  });

  it('runs a grandchild without placeholders of its own once per row with the inherited ones', () => {
    const [ordersRun] = planChildRuns(
      makeConfig({ jobs: [{ endpoint: 'u', children: [{ endpoint: 'u/{id}/o', placeholders: { id: 'id' }, children: [{ endpoint: 'u/{id}/o/all' }] }] }] })
        .config.jobs[0],
      [{ id: 1 }],
      null,
    ).runs;
    expect(planChildRuns(ordersRun.job, [{ no: 1 }, { no: 2 }], ordersRun.parent).runs.map((r) => r.job.endpoint)).toEqual(['u/1/o/all', 'u/1/o/all']);
  });

  it('starts one run per element of a placeholder value that is an array, every combination in order', () => {
    const job = makeConfig({
      jobs: [{ endpoint: 'u', children: [{ endpoint: 'u/{a}/{b}', placeholders: { a: 'as', b: 'bs' } }] }],
    }).config.jobs[0];
    const plan = planChildRuns(
      job,
      [
        { as: ['x', 'y'], bs: [1, 2] },
        { as: 'z', bs: [] },
      ],
      null,
    );
    expect(plan.runs.map((r) => [r.job.endpoint, r.parentColumns])).toEqual([
      ['u/x/1', { parent_as: 'x', parent_bs: '1' }],
      ['u/x/2', { parent_as: 'x', parent_bs: '2' }],
      ['u/y/1', { parent_as: 'y', parent_bs: '1' }],
      ['u/y/2', { parent_as: 'y', parent_bs: '2' }],
    ]);
    expect(plan.runs[1].parent.params.map((p) => p.value)).toEqual(['x', 2]);
  });

  it('skips parent rows that do not pass the child job recursionFilter', () => {
    const job = makeConfig({
      jobs: [{ endpoint: 'u', children: [{ endpoint: 'u/{id}', placeholders: { id: 'id' }, recursionFilter: 'role==parent|id>300&id<400' }] }],
    }).config.jobs[0];
    const rows = [
      { id: 123, role: 'parent' },
      { id: 345, role: 'child' },
      { id: 456, role: 'child' },
    ];
    expect(planChildRuns(job, rows, null).runs.map((r) => [r.job.endpoint, r.rowIndex])).toEqual([
      ['u/123', 0],
      ['u/345', 1],
    ]);
  });

  it('fails with the placeholder and level when a level does not exist', () => {
    const deep = makeConfig({ jobs: [{ endpoint: 'a', children: [{ endpoint: 'b/{3:x}', placeholders: { '3:x': 'id' } }] }] }).config.jobs[0];
    expect(() => planChildRuns(deep, [{ id: 1 }], null)).toThrow('Level 3 not found in parent results! Maximum level: 1');
  });
});
