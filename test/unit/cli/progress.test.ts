import { barPosition, formatBytes, formatDuration, pollProgress, progressFields } from '../../../src/cli/progress';
import type { TransferProgress } from '../../../src/contracts/transfer';

describe('CLI progress', () => {
  it('shows bytes against the total with a percentage, slices and the Storage job status', () => {
    expect(progressFields({ phase: 'uploading', bytes: 5 * 1024 * 1024, totalBytes: 20 * 1024 * 1024, slicesDone: 1, slices: 4 })).toEqual({
      phase: 'uploading',
      transferred: '5.0 MiB / 20.0 MiB (25%), slices 1/4',
      job: '',
    });
    expect(progressFields({ phase: 'importing', bytes: 1536, fileId: 3, jobId: 12, jobStatus: 'processing' })).toEqual({
      phase: 'importing',
      transferred: '1.5 KiB',
      job: 'job 12 processing',
    });
    expect(progressFields({ phase: 'starting', bytes: 0 }).transferred).toBe('');
  });

  it('fills the bar by bytes of a known total, else only once the transfer is over', () => {
    expect(barPosition({ phase: 'uploading', bytes: 30, totalBytes: 120 })).toEqual([30, 120]);
    expect(barPosition({ phase: 'uploading', bytes: 30 })).toEqual([0, 1]);
    expect(barPosition({ phase: 'importing', bytes: 30 })).toEqual([1, 1]);
    expect(barPosition({ phase: 'done', bytes: 0 })).toEqual([1, 1]);
  });

  it('formats sizes and durations for people', () => {
    expect(formatBytes(0)).toBe('0 B');
    expect(formatBytes(1023)).toBe('1023 B');
    expect(formatBytes(3 * 1024 ** 3)).toBe('3.0 GiB');
    expect(formatDuration(2345)).toBe('2.3 s');
    expect(formatDuration(125_000)).toBe('2 min 5 s');
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
