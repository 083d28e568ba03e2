import { Misbehaviour } from '../../../src/sample-api/misbehave';

describe("the sample API's misbehaviour rules", () => {
  it('apply after `after` requests, `times` times, and only while their `untilMs` window is open', () => {
    const rules = new Misbehaviour();
    rules.add({ kind: 'server-error', path: '/a', after: 1, times: 2, untilMs: 3_600_000 });
    expect(['/a', '/a', '/a', '/a', '/b'].map((p) => rules.take(p)?.kind)).toEqual([undefined, 'server-error', 'server-error', undefined, undefined]);
    // a window of 0 ms is already closed: the rule never applies
    rules.clear();
    rules.add({ kind: 'reset', times: Infinity, untilMs: 0 });
    expect(rules.take('/a')).toBeUndefined();
  });
});
