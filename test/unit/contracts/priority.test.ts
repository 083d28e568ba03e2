import { defaultFairnessKey, priorityProblems } from '../../../src/contracts/priority';

describe('run priority', () => {
  it('defaults the fairness key to the Storage connection, or the extracted API host', () => {
    expect(defaultFairnessKey({ operation: 'import' })).toBe('storage:default');
    expect(defaultFairnessKey({ operation: 'export', connection: 'crm' })).toBe('storage:crm');
    expect(defaultFairnessKey({ operation: 'extract', input: { config: { parameters: { api: { baseUrl: 'https://User@API.Example.com:8443/v1/' } } } } })).toBe(
      'api:api.example.com',
    );
    expect(defaultFairnessKey({ operation: 'extract', input: { config: {} } })).toBeUndefined();
    // the server's limit is 64 bytes
    const long = defaultFairnessKey({ operation: 'import', connection: 'ž'.repeat(60) })!;
    expect(new TextEncoder().encode(long).length).toBeLessThanOrEqual(64);
    expect(long.startsWith('storage:žž')).toBe(true);
  });

  it('refuses keys outside 1–5, empty or long fairness keys and weights outside 0.001–1000', () => {
    expect(priorityProblems({ priorityKey: 1, fairnessKey: 'a', fairnessWeight: 1000 })).toEqual([]);
    expect(priorityProblems({ priorityKey: 0 })).toEqual(['priority must be an integer from 1 (first) to 5 (last), got 0']);
    expect(priorityProblems({ priorityKey: 2.5 })).toHaveLength(1);
    expect(priorityProblems({ fairnessKey: '' })).toEqual(['fairness key must be 1 to 64 bytes, got 0']);
    expect(priorityProblems({ fairnessKey: 'x'.repeat(65) })).toHaveLength(1);
    expect(priorityProblems({ fairnessWeight: 0 })).toEqual(['fairness weight must be a number from 0.001 to 1000, got 0']);
    expect(priorityProblems({ fairnessWeight: Number.NaN })).toHaveLength(1);
  });
});
