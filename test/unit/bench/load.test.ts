import { loadLabel, startCpuLoad } from '../../../bench/lib/load';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('the CPU load beside a transfer pass', () => {
  it('starts one busy process per core asked for and ends them when stopped', async () => {
    const load = startCpuLoad(2);
    expect(load.pids).toHaveLength(2);
    expect(load.pids.every(alive)).toBe(true);
    await load.stop();
    expect(load.pids.some(alive)).toBe(false);
  });

  it('starts nothing for 0 cores, and labels the loaded passes', async () => {
    const none = startCpuLoad(0);
    expect(none.pids).toEqual([]);
    await none.stop();
    expect([loadLabel(0), loadLabel(1), loadLabel(2)]).toEqual(['', ' [1 busy core]', ' [2 busy cores]']);
  });
});
