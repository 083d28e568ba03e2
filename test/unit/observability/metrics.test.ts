import type { MetricMeter, MetricTags } from '@temporalio/common';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { failureType, recordActivityFailure, recordActivityResult, recordJobWait, SeenJobs } from '../../../src/observability/metrics';

/** A meter that keeps what was recorded: `name{tags}` → values. */
function recordingMeter() {
  const recorded: Array<{ name: string; value: number; tags: MetricTags }> = [];
  const metric = (name: string) => {
    const record = (value: number, tags: MetricTags = {}) => recorded.push({ name, value, tags });
    return { name, add: record, record, set: record, withTags: () => metric(name) };
  };
  const meter = {
    createCounter: metric,
    createHistogram: (name: string) => metric(name),
    createGauge: (name: string) => metric(name),
    withTags: () => meter,
  } as unknown as MetricMeter;
  const total = (name: string, tags: MetricTags = {}) =>
    recorded.filter((r) => r.name === name && Object.entries(tags).every(([k, v]) => r.tags[k] === v)).reduce((s, r) => s + r.value, 0);
  return { meter, recorded, total };
}

describe('metrics from activity results', () => {
  it('creates each instrument of a meter once (a creation is a call into the native runtime), whatever the number of results', () => {
    const { meter, total } = recordingMeter();
    const created = jest.spyOn(meter, 'createCounter');
    const seen = new SeenJobs();
    for (let i = 0; i < 5; i++) recordActivityResult(meter, 'uploadFile', { bytes: 10 }, seen);
    for (let i = 0; i < 3; i++) recordActivityFailure(meter, ApplicationFailure.retryable('x', 'SAPI_SERVER_ERROR'));
    expect(total('sapi_bytes_transferred_total', { direction: 'upload' })).toBe(50);
    expect(total('sapi_activity_failures_total')).toBe(3);
    expect(created.mock.calls.map(([name]) => name)).toEqual(['sapi_bytes_transferred_total', 'sapi_activity_failures_total']);
  });

  it("counts upload bytes, download bytes and fetched pages from the transfer activities' results", () => {
    const { meter, total } = recordingMeter();
    const seen = new SeenJobs();
    recordActivityResult(meter, 'uploadFile', { bytes: 100, sourceBytes: 100 }, seen);
    recordActivityResult(meter, 'uploadSlices', { bytes: 50 }, seen);
    recordActivityResult(meter, 'uploadViaImporter', { fileId: 1, bytes: 7 }, seen);
    recordActivityResult(meter, 'downloadFile', { path: '/x', bytes: 30 }, seen);
    recordActivityResult(meter, 'fetchPages', { pages: 3, bytes: 900 }, seen);
    recordActivityResult(meter, 'prepareFile', { bytes: 1_000_000 }, seen); // not a transfer
    expect(total('sapi_bytes_transferred_total', { direction: 'upload' })).toBe(157);
    expect(total('sapi_bytes_transferred_total', { direction: 'download' })).toBe(930);
    expect(total('sapi_pages_fetched_total')).toBe(3);
  });

  it('counts the rows of a finished import job once, whichever job activity reports it', () => {
    const { meter, total } = recordingMeter();
    const seen = new SeenJobs();
    recordActivityResult(meter, 'createTableAsync', { id: 5, status: 'processing' }, seen);
    recordActivityResult(meter, 'getJob', { id: 5, status: 'success', results: { importedRowsCount: 40 } }, seen);
    recordActivityResult(meter, 'getJob', { id: 5, status: 'success', results: { importedRowsCount: 40 } }, seen); // a retried poll
    recordActivityResult(meter, 'loadTableAsync', { id: 6, status: 'success', results: { importedRowsCount: 2 } }, seen);
    recordActivityResult(meter, 'getJob', { id: 7, status: 'error', error: { message: 'bad' } }, seen);
    recordActivityResult(meter, 'exportTableAsync', { id: 8, status: 'success', results: { fileId: 3 } }, seen);
    expect(total('sapi_rows_imported_total')).toBe(42);
  });

  it("counts the bytes and the finished job of the short path's uploadAndStartJob (the job under `job`), the job once", () => {
    const { meter, total } = recordingMeter();
    const seen = new SeenJobs();
    recordActivityResult(meter, 'uploadAndStartJob', { bytes: 120, sha256: 'x', job: { id: 9, status: 'success', results: { importedRowsCount: 3 } } }, seen);
    recordActivityResult(meter, 'getJob', { id: 9, status: 'success', results: { importedRowsCount: 3 } }, seen);
    recordActivityResult(meter, 'uploadAndStartJob', { bytes: 10, job: { id: 10, status: 'processing' } }, seen);
    expect(total('sapi_bytes_transferred_total', { direction: 'upload' })).toBe(130);
    expect(total('sapi_rows_imported_total')).toBe(3);
  });

  it('counts failed attempts by their error code', () => {
    const { meter, total } = recordingMeter();
    recordActivityFailure(meter, ApplicationFailure.create({ type: 'SAPI_SERVICE_UNAVAILABLE', message: '503' }));
    recordActivityFailure(meter, ApplicationFailure.create({ type: 'SAPI_SERVICE_UNAVAILABLE', message: '503' }));
    recordActivityFailure(meter, new CancelledFailure('cancelled'));
    expect(total('sapi_activity_failures_total', { type: 'SAPI_SERVICE_UNAVAILABLE' })).toBe(2);
    expect(total('sapi_activity_failures_total', { type: 'CANCELLED' })).toBe(1);
    expect(failureType(new TypeError('x'))).toBe('TypeError');
    expect(failureType('thrown string')).toBe('UNKNOWN');
  });

  it("records a job's wait from its own creation to its end, once, and only for ended jobs", () => {
    const { meter, recorded } = recordingMeter();
    const seen = new SeenJobs();
    const job = { id: 9, status: 'success', operationName: 'tableImport', createdTime: '2024-01-01T00:00:00Z', endTime: '2024-01-01T00:00:12.5Z' };
    recordJobWait(meter, { ...job, status: 'processing', endTime: null }, seen);
    recordJobWait(meter, job, seen);
    recordJobWait(meter, job, seen);
    expect(recorded).toEqual([{ name: 'sapi_job_wait_seconds', value: 12.5, tags: { operation: 'tableImport', status: 'success' } }]);
  });

  it('forgets the oldest job ids beyond its limit', () => {
    const seen = new SeenJobs(2);
    expect([seen.first('a'), seen.first('b'), seen.first('a'), seen.first('c'), seen.first('a')]).toEqual([true, true, false, true, true]);
  });
});
