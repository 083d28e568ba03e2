import { mbPerSecond, median, meets, percentile, ratio, round, slope } from '../../../bench/lib/stats';

describe('bench statistics', () => {
  it('takes the middle value, or the mean of the two middle ones, as the median', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeUndefined();
  });

  it('interpolates percentiles between closest ranks and ignores NaN', () => {
    expect(percentile([10, 20, 30, 40, 50], 0)).toBe(10);
    expect(percentile([10, 20, 30, 40, 50], 100)).toBe(50);
    expect(percentile([10, 20, 30, 40, 50], 95)).toBeCloseTo(48);
    expect(percentile([1, Number.NaN, 3], 50)).toBe(2);
    expect(() => percentile([1], 101)).toThrow('percentile must be within 0..100, got 101');
  });

  it('gives no ratio without a baseline or against a zero baseline', () => {
    expect(ratio(90, 100)).toBe(0.9);
    expect(ratio(1, 0)).toBeUndefined();
    expect(ratio(undefined, 5)).toBeUndefined();
    expect(ratio(5, undefined)).toBeUndefined();
  });

  it('reports throughput in decimal MB per second', () => {
    expect(mbPerSecond(1_000_000_000, 10_000)).toBe(100);
    expect(mbPerSecond(1, 0)).toBeUndefined();
  });

  it('judges a value against an at-least or at-most target, and nothing without a value', () => {
    expect(meets(0.9, { op: '>=', value: 0.9 })).toBe(true);
    expect(meets(0.89, { op: '>=', value: 0.9 })).toBe(false);
    expect(meets(301, { op: '<=', value: 300 })).toBe(false);
    expect(meets(undefined, { op: '<=', value: 300 })).toBeUndefined();
  });

  it('rounds and fits a slope', () => {
    expect(round(1.23456, 2)).toBe(1.23);
    expect(round(undefined)).toBeUndefined();
    expect(
      slope([
        { x: 0, y: 1 },
        { x: 1, y: 3 },
        { x: 2, y: 5 },
      ]),
    ).toBeCloseTo(2);
    expect(slope([{ x: 1, y: 1 }])).toBeUndefined();
  });
});
