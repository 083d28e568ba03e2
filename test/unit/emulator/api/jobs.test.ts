import { createBucket, createTable, expectSuccess, uploadViaImporter, useMemoryEmulator, waitForJob } from '../../../harness/emulator-api';

describe('jobs', () => {
  const env = useMemoryEmulator({ jobDelays: { waitingMs: 300, processingMs: 300 } });

  beforeAll(async () => {
    await createBucket(env.api, 'jobs');
  });

  test('a job answers 202, then moves waiting → processing → success with its timestamps and results', async () => {
    const fileId = await uploadViaImporter(env.api, 'a,b\n1,2\n');
    const res = await env.api('POST', '/buckets/in.c-jobs/tables-async', { json: { name: 'lifecycle', dataFileId: fileId } });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({
      status: 'waiting',
      operationName: 'tableCreate',
      tableId: 'in.c-jobs.lifecycle',
      results: null,
      error: null,
      startTime: null,
      endTime: null,
    });
    expect(res.body.url).toBe(`${env.emulator.url}/v2/storage/jobs/${res.body.id}`);
    expect(res.body.operationParams).toMatchObject({ source: { fileId }, name: 'lifecycle', delimiter: ',', enclosure: '"' });
    expect(res.body.creatorToken).toEqual({ id: 101, description: 'test token' });
    const seen = new Set<string>();
    let job = res.body;
    while (job.status !== 'success' && job.status !== 'error') {
      seen.add(job.status);
      await new Promise((r) => setTimeout(r, 40));
      job = (await env.api('GET', `/jobs/${res.body.id}`)).body;
    }
    expect([...seen]).toEqual(['waiting', 'processing']);
    expectSuccess(job);
    expect(job.results).toMatchObject({ id: 'in.c-jobs.lifecycle', columns: ['a', 'b'], importedRowsCount: 1 });
    expect(job.createdTime <= job.startTime && job.startTime <= job.endTime).toBe(true);
    expect(job.metrics).toBeDefined();
  });

  test('jobs are listed newest first and paged with limit and offset', async () => {
    const all = (await env.api('GET', '/jobs')).body;
    const ids = all.map((j: { id: number }) => j.id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    const page = (await env.api('GET', '/jobs?limit=1&offset=0')).body;
    expect(page.map((j: { id: number }) => j.id)).toEqual([ids[0]]);
  });

  test('an unknown job is 404 storage.jobs.notFound', async () => {
    const res = await env.api('GET', '/jobs/424242');
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('storage.jobs.notFound');
  });

  test('failJob makes the next job of an operation fail with the given message, then jobs succeed again', async () => {
    env.emulator.faults.failJob({ operationName: 'tableCreate', message: 'Injected: backend unavailable' });
    const failed = await createTable(env.api, 'in.c-jobs', 'f1', 'a\n1\n');
    expect(failed.status).toBe('error');
    expect(failed.error).toMatchObject({ message: 'Injected: backend unavailable', code: 'storage.jobs.injectedFailure' });
    expect((await env.api('GET', '/tables/in.c-jobs.f1')).status).toBe(404);
    expectSuccess(await createTable(env.api, 'in.c-jobs', 'f1', 'a\n1\n'));
  });

  test('slowJob stretches the processing time of the next job', async () => {
    env.emulator.faults.slowJob({ operationName: 'tableExport', ms: 1000, times: 1 });
    const res = await env.api('POST', '/tables/in.c-jobs.f1/export-async', { json: {} });
    const job = await waitForJob(env.api, res.body.id);
    expectSuccess(job);
    // the job's own times (what a client sees), whole seconds: processing took the extra second
    const at = (t: unknown) => Date.parse(String(t).replace(/\+0000$/, 'Z'));
    expect(at(job.endTime) - at(job.startTime)).toBeGreaterThanOrEqual(1000);
  });

  test('the X-KBC-RunId header becomes the runId of the job the request creates, and of the exported file', async () => {
    const res = await env.api('POST', '/tables/in.c-jobs.f1/export-async', { json: {}, headers: { 'X-KBC-RunId': 'abc' } });
    expect(res.status).toBe(202);
    expect(res.body.runId).toBe('abc');
    const job = expectSuccess(await waitForJob(env.api, res.body.id));
    expect((await env.api('GET', `/jobs/${job.id}`)).body.runId).toBe('abc');
    const listed = (await env.api('GET', '/jobs')).body.find((j: { id: number }) => j.id === job.id);
    expect(listed.runId).toBe('abc');
    expect((await env.api('GET', `/files/${job.results.file.id}`)).body.runId).toBe('abc');
    const plain = await env.api('POST', '/tables/in.c-jobs.f1/export-async', { json: {} });
    expect(plain.body.runId).toBeNull();
    expect((await waitForJob(env.api, plain.body.id)).runId).toBeNull();
  });

  test('load jobs carry the run id too', async () => {
    const fileId = await uploadViaImporter(env.api, 'a\n2\n');
    const res = await env.api('POST', '/tables/in.c-jobs.f1/import-async', { json: { dataFileId: fileId }, headers: { 'x-kbc-runid': 'run.42' } });
    expect(expectSuccess(await waitForJob(env.api, res.body.id)).runId).toBe('run.42');
  });
});
