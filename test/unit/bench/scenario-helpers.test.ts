import { rssGrowth } from '../../../bench/scenarios/extract';
import { latencyBudgetMs } from '../../../bench/scenarios/poll-latency';

describe('scenario helpers', () => {
  it('allows a job max(1 s, 25 % of its duration) to be noticed', () => {
    expect(latencyBudgetMs(2_000)).toBe(1_000);
    expect(latencyBudgetMs(4_000)).toBe(1_000);
    expect(latencyBudgetMs(10_000)).toBe(2_500);
    expect(latencyBudgetMs(30_000)).toBe(7_500);
  });

  it('measures memory growth from the second tenth of a run (after warm-up) to the last', () => {
    const samples = Array.from({ length: 100 }, (_, i) => ({ tMs: i * 100, rssKiB: (200 + (i < 10 ? i * 5 : 50 + i / 10)) * 1000 }));
    const growth = rssGrowth(samples);
    expect(growth.earlyMb).toBeGreaterThan(250);
    expect(growth.lateMb).toBeGreaterThan(growth.earlyMb);
    expect(growth.growthMb).toBe(growth.lateMb - growth.earlyMb);
    expect(rssGrowth([])).toEqual({ earlyMb: 0, lateMb: 0, growthMb: 0 });
  });
});
