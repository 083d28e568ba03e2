/**
 * The windows of a backfill (pure): bounds from the range and an ISO 8601 window, the last one cut at `to`, calendar
 * months, what each window's extraction gets (bounds in parameters.config.backfill, no run state), and the refusals.
 */
import { backfillWindows, dateWindows, parseWindowLength, windowExtractInput, windowWorkflowId } from '../../../src/contracts/backfill-plan';
import { parseExtractorConfig } from '../../../src/extractor/config-schema';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const bounds = (input: Parameters<typeof dateWindows>[0]) => dateWindows(input).windows.map((w) => `${w.from}..${w.to}`);

describe('backfill windows', () => {
  it('steps from `from` by the window and cuts the last one at `to`', () => {
    expect(bounds({ from: '2025-01-01', to: '2025-01-20', window: 'P7D' })).toEqual([
      '2025-01-01..2025-01-08',
      '2025-01-08..2025-01-15',
      '2025-01-15..2025-01-20',
    ]);
  });

  it('counts months in the calendar, and gives full times when a bound or the window has a time of day', () => {
    expect(bounds({ from: '2024-11-01', to: '2025-02-01', window: 'P1M' })).toEqual([
      '2024-11-01..2024-12-01',
      '2024-12-01..2025-01-01',
      '2025-01-01..2025-02-01',
    ]);
    expect(bounds({ from: '2025-01-01', to: '2025-01-01T18:00:00Z', window: 'PT6H' })).toEqual([
      '2025-01-01T00:00:00Z..2025-01-01T06:00:00Z',
      '2025-01-01T06:00:00Z..2025-01-01T12:00:00Z',
      '2025-01-01T12:00:00Z..2025-01-01T18:00:00Z',
    ]);
  });

  it('computes the calendar by itself (workflow code makes no Date): leap days, 80 years of months as Date says', () => {
    expect(bounds({ from: '2024-02-28', to: '2024-03-02', window: 'P1D' })).toEqual([
      '2024-02-28..2024-02-29',
      '2024-02-29..2024-03-01',
      '2024-03-01..2024-03-02',
    ]);
    const months = dateWindows({ from: '1970-01-01T00:00:00Z', to: '2050-01-01T00:00:00Z', window: 'P1MT1H1M1S' }).windows;
    const starts: string[] = [];
    for (let i = 0; Date.UTC(1970, i, 1, i, i, i) < Date.UTC(2050, 0, 1); i++)
      starts.push(new Date(Date.UTC(1970, i, 1, i, i, i)).toISOString().replace(/\.000Z$/, 'Z'));
    expect(starts.length).toBeGreaterThan(900);
    expect(months.map((w) => w.from)).toEqual(starts);
  });

  it('reads ISO 8601 durations and refuses zero or other text', () => {
    expect(parseWindowLength('P1W')).toMatchObject({ days: 7 });
    expect(parseWindowLength('P1Y2M3DT4H5M6S')).toEqual({ years: 1, months: 2, days: 3, hours: 4, minutes: 5, seconds: 6 });
    for (const bad of ['P0D', 'P', 'PT', '7d', '1 week', 'P1DT']) expect(parseWindowLength(bad)).toBeNull();
  });

  it('refuses a bad range naming the field, and more than 1000 windows', () => {
    expect(dateWindows({ from: '2025-02-30', to: '2025-03-01', window: 'P1D' }).problems[0]).toMatch(/^from must be a date/);
    expect(dateWindows({ from: '2025-01-02', to: '2025-01-01', window: 'P1D' }).problems).toEqual(['from (2025-01-02) must be before to (2025-01-01)']);
    expect(dateWindows({ from: '2020-01-01', to: '2025-01-01', window: 'P1D' }).problems[0]).toContain('more than 1000 windows');
  });

  it("gives a window's extraction its bounds as user data and no run state; child ids are the backfill's id and the label", () => {
    const config = JSON.parse(readFileSync(join(__dirname, '..', '..', '..', 'examples', 'backfill-events.json'), 'utf8'));
    const extract = { config, stateKey: 'live', options: { bucketId: 'in.c-x' } };
    const { windows, problems } = backfillWindows({ kind: 'extract', extract, from: '2025-01-01', to: '2025-01-15', window: 'P7D' });
    expect(problems).toEqual([]);
    const child = windowExtractInput(extract, windows[1]!);
    expect(child.stateKey).toBeUndefined();
    expect(child.options).toEqual({ bucketId: 'in.c-x' });
    const parsed = parseExtractorConfig(child.config);
    expect(parsed.config.attributes?.backfill).toEqual({
      from: '2025-01-08',
      to: '2025-01-15',
      fromTimestamp: Date.UTC(2025, 0, 8) / 1000,
      toTimestamp: Date.UTC(2025, 0, 15) / 1000,
    });
    expect(windowWorkflowId('bf-1', windows[1]!)).toBe('bf-1-w0002');
    // the input itself is left as it was (the live configuration has no backfill key)
    expect(config.parameters.config.backfill).toBeUndefined();
  });
});
