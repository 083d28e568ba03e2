import { Faults } from '../../../src/emulator/faults';

/** Whether `promise` has settled once every pending callback has run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  await new Promise((r) => setImmediate(r));
  return done;
}

describe('job holds', () => {
  it('holds a job of the held operation until releaseJobs, and lets other operations through', async () => {
    const faults = new Faults();
    faults.holdJob({ operationName: 'tableCreate' });
    const signal = new AbortController().signal;
    const create = faults.holdFor({ id: 1, operationName: 'tableCreate' }, signal);
    expect(await settled(faults.holdFor({ id: 2, operationName: 'tableExport' }, signal))).toBe(true);
    expect(await settled(create)).toBe(false);
    expect(await faults.jobHeld('tableCreate')).toEqual({ id: 1, operationName: 'tableCreate' });
    expect(faults.releaseJobs('tableCreate')).toEqual([{ id: 1, operationName: 'tableCreate' }]);
    expect(await settled(create)).toBe(true);
    // the rule went with the release: the next job runs through
    expect(await settled(faults.holdFor({ id: 3, operationName: 'tableCreate' }, signal))).toBe(true);
  });

  it('tells a test waiting for a held job which one the emulator holds, once it holds it', async () => {
    const faults = new Faults();
    faults.holdJob({ times: 1 });
    const held = faults.jobHeld('tableImport');
    const other = faults.jobHeld('tableCreate');
    void faults.holdFor({ id: 7, operationName: 'tableImport' }, new AbortController().signal);
    expect(await held).toEqual({ id: 7, operationName: 'tableImport' });
    expect(await settled(other)).toBe(false);
    // times: 1: the next job of any operation is not held
    expect(await settled(faults.holdFor({ id: 8, operationName: 'tableCreate' }, new AbortController().signal))).toBe(true);
  });

  it('lets held jobs end when the emulator closes (abort) or the rules are cleared', async () => {
    const faults = new Faults();
    faults.holdJob({});
    const closing = new AbortController();
    const first = faults.holdFor({ id: 1, operationName: 'tableCreate' }, closing.signal);
    const second = faults.holdFor({ id: 2, operationName: 'tableCreate' }, new AbortController().signal);
    closing.abort();
    expect(await settled(first)).toBe(true);
    expect(await settled(second)).toBe(false);
    faults.clear();
    expect(await settled(second)).toBe(true);
    expect(faults.releaseJobs()).toEqual([]);
  });
});
