import {
  cpuSecondsWithin,
  kibToMb,
  parseSmaps,
  parseProcStatTicks,
  parseProcStatTimes,
  parseProcStatus,
  readCpuSeconds,
  readMemory,
  RssSampler,
  rssTimeline,
} from '../../../bench/lib/proc';

const status = `Name:\tnode
VmPeak:\t 1234567 kB
VmSize:\t 1200000 kB
VmHWM:\t  250000 kB
VmRSS:\t  180000 kB
RssAnon:\t  100000 kB
RssFile:\t   80000 kB
Threads:\t17
`;

describe('reading a process memory and CPU from /proc', () => {
  it('parses VmRSS, VmHWM, the anon/file split in KiB and the thread count from a status file', () => {
    expect(parseProcStatus(status)).toEqual({ rssKiB: 180000, hwmKiB: 250000, rssAnonKiB: 100000, rssFileKiB: 80000, threads: 17 });
    expect(parseProcStatus('VmHWM:\t 2 kB\nVmRSS:\t 1 kB\n')).toEqual({ rssKiB: 1, hwmKiB: 2 });
  });

  it('says which field is missing when the status has no memory lines', () => {
    expect(() => parseProcStatus('Name:\tkthreadd\n')).toThrow('/proc status has no VmRSS line');
  });

  it('sums utime and stime of a stat line whose command holds spaces and parentheses', () => {
    const line = '4242 (node (worker) x) S 1 4242 4242 0 -1 4194304 100 0 0 0 1234 56 0 0 20 0 11 0 100 1000 100';
    expect(parseProcStatTicks(line)).toBe(1290);
    expect(parseProcStatTimes(line)).toEqual({ user: 1234, system: 56 });
  });

  it('reads this very process', () => {
    expect(readMemory(process.pid)!.rssKiB).toBeGreaterThan(1000);
    expect(readCpuSeconds(process.pid)).toBeGreaterThan(0);
    expect(readMemory(2 ** 22 + 12345)).toBeUndefined();
  });

  it('samples a peak at least as high as the resident size at start', async () => {
    const sampler = new RssSampler(process.pid, 10).start();
    await new Promise((r) => setTimeout(r, 50));
    const window = sampler.stop();
    expect(window.samples.length).toBeGreaterThanOrEqual(2);
    expect(window.peakKiB).toBeGreaterThanOrEqual(window.startKiB);
    for (const sample of window.samples) expect(sample.userS! + sample.sysS!).toBeCloseTo(sample.cpuS!, 6); // the split adds up
  });

  it('reduces a timeline to per-slice maxima in MB, repeating the last value over empty slices', () => {
    const samples = [
      { tMs: 0, rssKiB: 100_000 },
      { tMs: 10, rssKiB: 120_000 },
      { tMs: 90, rssKiB: 110_000 },
      { tMs: 100, rssKiB: 130_000 },
    ];
    expect(rssTimeline(samples, 4)).toEqual([123, 123, 123, 133]);
    expect(rssTimeline([], 4)).toEqual([]);
    expect(kibToMb(292_969)).toBe(300);
  });
});

describe('splitting a process RSS by mapping', () => {
  it('adds up anonymous memory, the brk heap, the node binary, native addons and other files', () => {
    const smaps = [
      '00400000-00500000 r-xp 00000000 fd:01 123 /usr/bin/node',
      'Rss:               40000 kB',
      '01000000-02000000 rw-p 00000000 00:00 0          [heap]',
      'Rss:                9000 kB',
      '7f0000000000-7f0001000000 rw-p 00000000 00:00 0 ',
      'Rss:               120000 kB',
      '7f1000000000-7f1001000000 r-xp 00000000 fd:01 77 /app/node_modules/@temporalio/core-bridge/releases/x86_64-unknown-linux-gnu/index.node',
      'Rss:               30000 kB',
      '7f2000000000-7f2000100000 r-xp 00000000 fd:01 78 /usr/lib/x86_64-linux-gnu/libc.so.6',
      'Rss:                1500 kB',
      '7ffd00000000-7ffd00100000 rw-p 00000000 00:00 0          [stack]',
      'Rss:                 100 kB',
    ].join('\n');
    expect(parseSmaps(smaps, '/usr/bin/node')).toEqual({
      totalKiB: 200600,
      anonymousKiB: 120100,
      brkHeapKiB: 9000,
      nodeBinaryKiB: 40000,
      addonsKiB: { 'index.node': 30000 },
      otherFilesKiB: 1500,
    });
  });
});

describe('CPU seconds within a window', () => {
  // samples every 100 ms from t0 = 1,000,000; the process uses 0.05 s of CPU per 100 ms
  const window = {
    peakKiB: 0,
    startKiB: 0,
    endKiB: 0,
    hwmReset: false,
    durationMs: 1000,
    startedAtMs: 1_000_000,
    // of which 0.03 s in user mode and 0.02 s in the kernel
    samples: Array.from({ length: 11 }, (_, i) => ({ tMs: i * 100, rssKiB: 1, cpuS: i * 0.05, userS: i * 0.03, sysS: i * 0.02 })),
  };

  it('reads the counter at each moment between its samples: work outside the window is not counted', () => {
    // 250 ms → 430 ms: 0.18 s × 0.5 = 0.09 s (the outer samples, 200 → 500 ms, would give 0.15 s)
    expect(cpuSecondsWithin(window, 1_000_250, 1_000_430)).toBe(0.09);
    expect(cpuSecondsWithin(window, 1_000_200, 1_000_500)).toBe(0.15);
  });

  it('reads the user or the system counter alone, interpolated the same way', () => {
    expect(cpuSecondsWithin(window, 1_000_250, 1_000_430, 'user')).toBe(0.05); // 0.18 s × 0.3 = 0.054
    expect(cpuSecondsWithin(window, 1_000_250, 1_000_430, 'system')).toBe(0.04); // 0.18 s × 0.2 = 0.036
    expect(cpuSecondsWithin(window, 1_000_000, 1_001_000, 'user')).toBe(0.3);
    expect(cpuSecondsWithin(window, 1_000_000, 1_001_000, 'system')).toBe(0.2);
    // samples of a sampler without the split (an older JSON): nothing to read
    const totalOnly = { ...window, samples: window.samples.map(({ tMs, rssKiB, cpuS }) => ({ tMs, rssKiB, cpuS })) };
    expect(cpuSecondsWithin(totalOnly, 1_000_000, 1_001_000, 'user')).toBeUndefined();
  });

  it('takes the nearest sample outside them, and refuses a reversed window or too few samples', () => {
    expect(cpuSecondsWithin(window, 999_000, 1_005_000)).toBe(0.5);
    expect(cpuSecondsWithin(window, 1_000_500, 1_000_400)).toBeUndefined();
    expect(cpuSecondsWithin({ ...window, samples: window.samples.slice(0, 1) }, 1_000_000, 1_000_100)).toBeUndefined();
  });
});
