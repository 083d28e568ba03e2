import { finalProgress, withTotal } from '../../../src/cli/follow';
import { barPosition, formatBytes, formatDuration, formatEta, pollProgress, progressFields, RateMeter } from '../../../src/cli/progress';
import { formatBytes as contractsFormatBytes } from '../../../src/contracts/search-attributes';
import type { TransferProgress } from '../../../src/contracts/transfer';

describe('CLI progress', () => {
  it('shows bytes against the total with a percentage, slices and the Storage job status', () => {
    expect(progressFields({ phase: 'uploading', bytes: 5_000_000, totalBytes: 20_000_000, slicesDone: 1, slices: 4 })).toEqual({
      phase: 'uploading',
      transferred: '5.0 MB / 20.0 MB (25%), slices 1/4',
      job: '',
    });
    expect(progressFields({ phase: 'importing', bytes: 1536, fileId: 3, jobId: 12, jobStatus: 'processing' })).toEqual({
      phase: 'importing',
      transferred: '1.5 kB',
      job: 'job 12 processing',
    });
    expect(progressFields({ phase: 'starting', bytes: 0 }).transferred).toBe('');
  });

  it('fills the bar by bytes of a known total, else only once the transfer is over', () => {
    expect(barPosition({ phase: 'uploading', bytes: 30, totalBytes: 120 })).toEqual([30, 120]);
    expect(barPosition({ phase: 'uploading', bytes: 30 })).toEqual([0, 1]);
    expect(barPosition({ phase: 'downloading', bytes: 30, slicesDone: 3, slices: 11 })).toEqual([3, 11]);
    expect(barPosition({ phase: 'done', bytes: 30, totalBytes: 120 })).toEqual([1, 1]);
    expect(barPosition({ phase: 'importing', bytes: 30 })).toEqual([1, 1]);
    expect(barPosition({ phase: 'done', bytes: 0 })).toEqual([1, 1]);
  });

  it('formats sizes and durations for people', () => {
    expect(formatBytes(0)).toBe('0 B');
    expect(formatBytes(999)).toBe('999 B');
    // the one format of the package (src/contracts), the Temporal UI's summaries included: decimal units
    expect(formatBytes(3_100_000_000)).toBe('3.1 GB');
    expect(formatBytes).toBe(contractsFormatBytes);
    expect(formatDuration(2345)).toBe('2.3 s');
    expect(formatDuration(125_000)).toBe('2 min 5 s');
  });

  it('measures the rate over the last seconds and the time left from the total, starting over when the bytes go back', () => {
    const meter = new RateMeter(10_000);
    expect(meter.sample(0, 100_000_000, 0)).toBeUndefined();
    expect(meter.sample(5_000_000, 100_000_000, 500)).toBeUndefined(); // less than a second of samples
    expect(meter.sample(10_000_000, 100_000_000, 1_000)).toEqual({ bytesPerSecond: 10_000_000, etaMs: 9_000 });
    // the window slides: the pace of the last ten seconds, not since the start
    for (let t = 2_000; t <= 20_000; t += 1_000) meter.sample(10_000_000 + (t - 1_000) * 1_000, 100_000_000, t);
    expect(meter.sample(31_000_000, 100_000_000, 22_000)?.bytesPerSecond).toBeCloseTo(1_000_000, -3);
    expect(meter.sample(1_000, undefined, 23_000)).toBeUndefined(); // a retry from zero
    expect(formatEta(9_000)).toBe('9 s');
    expect(formatEta(125_000)).toBe('2 min 5 s');
    expect(formatEta(4_830_000)).toBe('1 h 20 min');
  });

  it('shows rate and time left on the bar while bytes move, and slices with their percentage when the total is unknown', () => {
    expect(progressFields({ phase: 'uploading', bytes: 10_000_000, totalBytes: 100_000_000 }, { bytesPerSecond: 10_000_000, etaMs: 9_000 }).transferred).toBe(
      '10.0 MB / 100.0 MB (10%), 10.0 MB/s, 9 s left',
    );
    expect(progressFields({ phase: 'downloading', bytes: 64_000_000, slicesDone: 3, slices: 11 }, { bytesPerSecond: 2_000_000 }).transferred).toBe(
      '64.0 MB, slices 3/11 (27%), 2.0 MB/s',
    );
    expect(progressFields({ phase: 'importing', bytes: 10, totalBytes: 10 }, { bytesPerSecond: 1 }).transferred).toBe('10 B / 10 B (100%)');
  });

  it("ends on the whole size and every slice of the result, not the last heartbeat's first slice", () => {
    const last = { phase: 'downloading', bytes: 64_000_000, slicesDone: 1, slices: 11 };
    expect(progressFields(finalProgress(last, { bytes: 643_200_000, slices: 11, sliced: true })).transferred).toBe('643.2 MB / 643.2 MB (100%), slices 11/11');
    expect(finalProgress({ phase: 'importing', bytes: 5, jobId: 3, jobStatus: 'processing' }, { bytes: 5 })).toMatchObject({
      phase: 'done',
      jobStatus: 'success',
    });
  });

  it('gives an upload the size of the local file as its total while the workflow reports none', () => {
    expect(withTotal({ phase: 'uploading', bytes: 10 }, 40)).toEqual({ phase: 'uploading', bytes: 10, totalBytes: 40 });
    expect(withTotal({ phase: 'importing', bytes: 10 }, 40)).toEqual({ phase: 'importing', bytes: 10 });
    expect(withTotal({ phase: 'uploading', bytes: 10 }, undefined)).toEqual({ phase: 'uploading', bytes: 10 });
  });

  it('polls one query at a time, skips failed answers and stops when asked', async () => {
    jest.useFakeTimers();
    try {
      const answers: TransferProgress[] = [];
      let calls = 0;
      const query = async (): Promise<TransferProgress> => {
        calls++;
        if (calls === 2) throw new Error('no worker yet');
        return { phase: 'uploading', bytes: calls };
      };
      const stop = pollProgress(query, (progress) => answers.push(progress), 500);
      await jest.advanceTimersByTimeAsync(1_100);
      stop();
      await jest.advanceTimersByTimeAsync(5_000);
      expect(calls).toBe(3);
      expect(answers.map((answer) => answer.bytes)).toEqual([1, 3]);
    } finally {
      jest.useRealTimers();
    }
  });
});
