import { describeError, figure, fileTimestamp, formatGoals, formatTable, formatTarget } from '../../../bench/lib/report';

describe('bench report', () => {
  it('computes the ratio against the baseline and judges a ratio target', () => {
    const f = figure({ scenario: 'upload', metric: 'upload phase', unit: 'MB/s', ours: 90, baseline: 120, target: { on: 'ratio', op: '>=', value: 0.9 } });
    expect(f.ratio).toBe(0.75);
    expect(f.met).toBe(false);
  });

  it('judges an absolute target on our number and leaves the verdict open without a value', () => {
    expect(
      figure({ scenario: 'upload', metric: 'worker peak RSS', unit: 'MB', ours: 180, baseline: 90, target: { on: 'ours', op: '<=', value: 300 } }).met,
    ).toBe(true);
    expect(figure({ scenario: 'x', metric: 'y', unit: 'MB', target: { on: 'ours', op: '<=', value: 300 } }).met).toBeUndefined();
  });

  it('prints aligned rows with the target and a verdict', () => {
    const text = formatTable([
      figure({ scenario: 'upload', metric: 'upload phase', unit: 'MB/s', ours: 100, baseline: 100, target: { on: 'ratio', op: '>=', value: 0.9 } }),
      figure({ scenario: 'concurrency', metric: 'succeeded', unit: '', ours: 200, note: 'of 200' }),
    ]);
    const lines = text.split('\n');
    expect(lines[0]).toMatch(/^scenario +\| metric +\| ours/);
    expect(lines[2]).toContain('upload phase (MB/s)');
    expect(lines[2]).toContain('1.00×');
    expect(lines[2]).toContain('ratio ≥ 0.9');
    expect(lines[2]).toContain('MET');
    expect(lines[3]).toContain('of 200');
    expect(formatTarget({ on: 'ours', op: '<=', value: 300 }, 'MB')).toBe('≤ 300 MB');
  });

  it('names result files with a colon-free timestamp', () => {
    expect(fileTimestamp(new Date('2024-05-01T10:20:30.456Z'))).toBe('2024-05-01T10-20-30Z');
  });
});

describe('describing a failure', () => {
  it('lists the cause chain with failure types, then a few stack lines', () => {
    const root = Object.assign(new Error('stream ended early'), { name: 'ApplicationFailure', type: 'SAPI_DOWNLOAD_FAILED' });
    const activity = new Error('Activity task failed', { cause: root });
    const workflow = new Error('Workflow execution failed', { cause: activity });
    const lines = describeError(workflow).split('\n');
    expect(lines.slice(0, 3)).toEqual([
      'Error: Workflow execution failed',
      'caused by: Error: Activity task failed',
      'caused by: ApplicationFailure [SAPI_DOWNLOAD_FAILED]: stream ended early',
    ]);
    expect(lines[3]).toMatch(/^ {4}at /);
    expect(describeError('plain')).toBe('plain');
  });
});

describe('the summary of an issue’s targets', () => {
  const goals = [
    { name: 'g1', asks: 'fast', scenarios: ['upload'] },
    { name: 'g2', asks: 'small', scenarios: ['idle'] },
    { name: 'g3', asks: 'cheap', scenarios: ['long-job'] },
  ];

  it('says MET when every figure of a target met it, MISSED when one missed, NOT MEASURED when the run had none', () => {
    const text = formatGoals(
      [
        figure({ scenario: 'upload', metric: 'CPU per GB', unit: 's/GB', ours: 3, baseline: 2, target: { on: 'ratio', op: '<=', value: 1.2 }, goal: 'g1' }),
        figure({ scenario: 'upload', metric: 'rate', unit: 'MB/s', ours: 100, baseline: 100, target: { on: 'ratio', op: '>=', value: 0.9 }, goal: 'g1' }),
        figure({ scenario: 'idle', metric: 'above the floor', unit: 'MB', ours: 12, target: { on: 'ours', op: '<=', value: 15 }, goal: 'g2' }),
        figure({ scenario: 'idle', metric: 'unrelated', unit: 'MB', ours: 999, target: { on: 'ours', op: '<=', value: 15 } }),
      ],
      goals,
    );
    const lines = text.split('\n');
    expect(lines[0]).toBe('g1: MISSED — fast');
    expect(lines[1]).toBe('  MISSED upload: CPU per GB: 1.50× (3.00 vs 2.00 s/GB), target ratio ≤ 1.2');
    expect(lines[2]).toContain('MET    upload: rate: 1.00×');
    expect(lines[3]).toBe('g2: MET — small');
    expect(lines[4]).toBe('  MET    idle: above the floor: 12.0 MB, target ≤ 15 MB');
    expect(lines[5]).toBe('g3: NOT MEASURED (run long-job) — cheap');
    expect(text).not.toContain('unrelated');
  });

  it('says INCOMPLETE when a pass of its scenarios failed and nothing judged missed, naming the failure', () => {
    const text = formatGoals(
      [
        figure({ scenario: 'upload', metric: 'rate', unit: 'MB/s', ours: 100, baseline: 100, target: { on: 'ratio', op: '>=', value: 0.9 }, goal: 'g1' }),
        { scenario: 'upload', metric: 'FAILED [1 busy core]', unit: '', note: 'table exists' },
      ],
      goals,
    );
    expect(text.split('\n').slice(0, 3)).toEqual([
      'g1: INCOMPLETE (a pass failed) — fast',
      '  MET    upload: rate: 1.00× (100 vs 100 MB/s), target ratio ≥ 0.9',
      '  FAILED upload: FAILED [1 busy core]: table exists',
    ]);
  });
});
