import { keptSlices, type DownloadState } from '../../../src/object-storage/download';
import { SliceLayout, SliceFailure } from '../../../src/object-storage/in-place-thread';

describe('SliceLayout', () => {
  it('gives each slice its offset once every slice before it has a size, in whatever order the sizes come', async () => {
    const layout = new SliceLayout(10, [], 4);
    const offsets: Array<[number, number]> = [];
    const third = layout.offsetOf(2).then((o) => offsets.push([2, o]));
    const fourth = layout.offsetOf(3).then((o) => offsets.push([3, o]));
    expect(await layout.offsetOf(0)).toBe(10); // after the header
    layout.setSize(1, 5);
    layout.setSize(2, 7);
    await Promise.resolve();
    expect(offsets).toEqual([]); // slice 0's size is still unknown
    layout.setSize(0, 3);
    await Promise.all([third, fourth]);
    expect(offsets).toEqual([
      [2, 18],
      [3, 25],
    ]);
    expect(layout.placeOf(1)).toEqual({ offset: 13, size: 5 });
    expect(layout.placeOf(3)).toBeUndefined(); // its own size is not known
  });

  it('takes the sizes of an earlier attempt, empty slices included', async () => {
    const layout = new SliceLayout(0, [4, 0, 6, null], 4);
    expect(await layout.offsetOf(3)).toBe(10);
    expect(layout.size(1)).toBe(0);
    expect(layout.size(3)).toBeUndefined();
  });

  it('rejects the waiting slices and later ones when abandoned (a slice before them failed)', async () => {
    const layout = new SliceLayout(0, [], 3);
    const waiting = layout.offsetOf(2);
    const failure = new SliceFailure({ kind: 'network', index: 0, message: 'reset', written: 0 });
    layout.abandon(failure);
    await expect(waiting).rejects.toBe(failure);
    await expect(layout.offsetOf(1)).rejects.toBe(failure);
    expect(await layout.offsetOf(0)).toBe(0); // known offsets stay known
  });
});

describe('keptSlices', () => {
  const state = (over: Partial<DownloadState> & { sizes?: Array<number | null>; source?: string }): DownloadState => ({
    slices: 4,
    finishedSlices: over.finishedSlices ?? [0, 2],
    bytesDownloaded: 0,
    inPlace: { source: over.source ?? 'file 7', sizes: over.sizes ?? [10, 20, 30, null] },
  });

  it('keeps the finished slices and the sizes when the same file was being downloaded and the partial file reaches them', () => {
    expect(keptSlices(state({}), 'file 7', 4, 5, 65)).toEqual({ finished: [0, 2], sizes: [10, 20, 30, null] });
  });

  it.each([
    ['another stored file', state({ source: 'file 8' }), 65],
    ['the partial file is gone', state({}), undefined],
    ['the partial file is shorter than the finished slices', state({}), 64],
    ['a size before a finished slice is unknown', state({ sizes: [10, null, 30, null] }), 100],
    ['another slice count', state({ sizes: [10, 20, 30] }), 100],
    ['nothing was finished', state({ finishedSlices: [] }), 100],
    [
      'a state of an earlier version (no sizes)',
      { slices: 4, finishedSlices: [0], bytesDownloaded: 10, inPlace: { source: 'file 7', bytes: 65 } } as unknown as DownloadState,
      65,
    ],
    ['no state', undefined, 65],
  ])('starts over when %s', (_what, resume, partialSize) => {
    expect(keptSlices(resume, 'file 7', 4, 5, partialSize)).toEqual({ finished: [], sizes: [null, null, null, null] });
  });
});
