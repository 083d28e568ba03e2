/** Run state between runs of a configuration: the reference's state.json, this run's times, the next state. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseExtractorConfig } from '../../../src/extractor/config-schema';
import { runExtraction } from '../../harness/run-extraction';
import { isStateKey, nextRunState, parseRunState, runStateStoreKey, runTimesOf, withRunTimes } from '../../../src/extractor/run-state';
import { GE_EXAMPLES_DIR } from './ge-examples';

const referenceState = (example: string) => JSON.parse(readFileSync(join(GE_EXAMPLES_DIR, example, 'in', 'state.json'), 'utf8')) as unknown;

describe('run state', () => {
  it.each(['107-incremental-load', '123-incremental-load-legacy'])('%s: a reference state.json imports as it is; previousStart comes from it', (example) => {
    const parsed = parseRunState(referenceState(example));
    expect(parsed.problems).toEqual([]);
    expect(runTimesOf(parsed.state, Date.UTC(2017, 8, 7, 10, 0, 0))).toEqual({ previousStart: 1492606006, currentStart: 1504778400 });
  });

  it('the next state sets previousStart to this run start and keeps the JSON parser keys untouched', () => {
    const previous = parseRunState(referenceState('107-incremental-load')).state;
    const next = nextRunState(previous, { previousStart: 1492606006, currentStart: 1504778400 });
    expect(next).toEqual({ ...(referenceState('107-incremental-load') as object), time: { previousStart: 1504778400 } });
  });

  it('without a stored state previousStart is 0 (as in the reference) and currentStart is the run start in seconds', () => {
    expect(runTimesOf(null, 1_700_000_000_999)).toEqual({ previousStart: 0, currentStart: 1_700_000_000 });
    expect(nextRunState(null, { previousStart: 0, currentStart: 1_700_000_000 })).toEqual({ time: { previousStart: 1_700_000_000 } });
  });

  it('{} is the empty state (a reset)', () => {
    expect(parseRunState({})).toEqual({ state: { time: { previousStart: 0 } }, problems: [] });
  });

  it.each([
    [[], /must be a JSON object/],
    [{ time: 5 }, /'time' must be an object/],
    [{ time: { previousStart: '2017-04-19' } }, /'time\.previousStart' must be Unix seconds.*"2017-04-19"/],
    [{ time: { previousStart: -1 } }, /'time\.previousStart' must be Unix seconds/],
  ])('refuses %j, saying what is wrong', (json, message) => {
    const parsed = parseRunState(json);
    expect(parsed.state).toBeNull();
    expect(parsed.problems.join()).toMatch(message);
  });

  it('state keys are safe object names', () => {
    expect(['config-123', 'a.b_c', '0'].map(isStateKey)).toEqual([true, true, true]);
    expect(['', '../x', 'a/b', '.hidden', 'x'.repeat(201)].map(isStateKey)).toEqual([false, false, false, false, false]);
    expect(runStateStoreKey('config-123')).toBe('run-state/config-123.json');
  });
});

describe('run times reach request building', () => {
  it('withRunTimes puts them in config.runTimes (where user functions read them), leaving the rest as it was', () => {
    const config = parseExtractorConfig({ parameters: { api: { baseUrl: 'http://api.test/' }, config: { jobs: [{ endpoint: 'users' }] } } });
    const times = { previousStart: 1492606006, currentStart: 1504778400 };
    expect(withRunTimes(config, times)).toEqual({ ...config, config: { ...config.config, runTimes: times } });
    expect(config.config.runTimes).toBeUndefined();
  });

  it('runExtraction runs with the given times and reports them', async () => {
    const config = parseExtractorConfig({ parameters: { api: { baseUrl: 'http://api.test/' }, config: { jobs: [{ endpoint: 'users' }] } } });
    const times = { previousStart: 1492606006, currentStart: 1504778400 };
    const result = await runExtraction(config, { fetchPage: () => Promise.resolve({ body: [], bytes: 2, hash: 'h' }), runTimes: times });
    expect(result.runTimes).toEqual(times);
  });
});
