import { parseExtractorConfig } from '../../../src/extractor/config-schema';
import { createScrollerState, nextStep } from '../../../src/extractor/scroller';
import {
  cursorOf,
  DEFAULT_BATCH_PAGES,
  extractBucketId,
  findJob,
  resolveExtractOptions,
  stagingRunKey,
  storageColumnNames,
} from '../../../src/contracts/extract-plan';

describe('extract workflow options', () => {
  it('applies the documented defaults', () => {
    expect(resolveExtractOptions()).toEqual({
      problems: [],
      options: {
        mode: 'batch',
        batchPages: DEFAULT_BATCH_PAGES,
        batchSeconds: 10,
        load: true,
        loadOnCancel: true,
        keepStaging: false,
        incremental: false,
        heartbeatTimeoutMs: 15_000,
        continueAsNewAfterPages: null,
        loadConcurrency: 4,
      },
    });
  });

  it('lists every invalid option with what it got', () => {
    const { problems } = resolveExtractOptions({
      mode: 'pages' as never,
      batchPages: 0,
      batchSeconds: -1,
      load: 'yes' as never,
      keepStaging: 1 as never,
      bucketId: 'main',
      heartbeatTimeoutMs: 10,
    });
    expect(problems).toEqual([
      'options.mode must be "page" or "batch", got "pages"',
      'options.batchPages must be a positive integer, got 0',
      'options.batchSeconds must be a positive number, got -1',
      'options.heartbeatTimeoutMs must be an integer ≥ 1000, got 10',
      'options.load must be true or false, got "yes"',
      'options.keepStaging must be true or false, got 1',
      'options.bucketId must look like in.c-name or out.c-name, got "main"',
    ]);
  });
});

describe('names for Storage', () => {
  it('derives the bucket from outputBucket: in.c-<name>, kept when already a bucket id, a default without one', () => {
    expect(extractBucketId(undefined, 'crm')).toBe('in.c-crm');
    expect(extractBucketId(undefined, 'in.c-crm')).toBe('in.c-crm');
    expect(extractBucketId(undefined, 'out.c-crm')).toBe('out.c-crm');
    expect(extractBucketId(undefined, 'my api/v2')).toBe('in.c-my_api_v2');
    expect(extractBucketId(undefined, null)).toBe('in.c-extractor');
    expect(extractBucketId('in.c-override', 'crm')).toBe('in.c-override');
  });

  it('makes column names Storage accepts: no hyphens, unique ignoring case', () => {
    expect(storageColumnNames(['id', 'first-name', 'first_name', 'ID', 'parent_id'])).toEqual(['id', 'first_name', 'first_name_u0', 'ID_u0', 'parent_id']);
  });

  it('keys staging by a path-safe workflow id and the first run id', () => {
    expect(stagingRunKey('extract/../users run', 'abc-123')).toBe('extract_.._users_run/abc-123');
    expect(stagingRunKey('..hidden', 'r')).toBe('_hidden/r');
  });
});

describe('jobs and cursors', () => {
  const config = parseExtractorConfig({
    parameters: {
      api: { baseUrl: 'https://api.example.com/', pagination: { method: 'response.param', responseParam: 'next', queryParam: 'cursor' } },
      config: {
        jobs: [
          {
            endpoint: 'a',
            children: [
              { endpoint: 'a/{id}/b', placeholders: { id: 'id' } },
              { endpoint: 'a/{id}/c', placeholders: { id: 'id' }, children: [{ endpoint: 'x/{id}', placeholders: { id: 'id' } }] },
            ],
          },
          { endpoint: 'd' },
        ],
      },
    },
  });

  it('finds a job by its id at any depth', () => {
    expect(findJob(config, '0').endpoint).toBe('a');
    expect(findJob(config, '0.1').endpoint).toBe('a/{id}/c');
    expect(findJob(config, '0.1.0').endpoint).toBe('x/{id}');
    expect(findJob(config, '1').endpoint).toBe('d');
    expect(() => findJob(config, '0.5')).toThrow(/job '0.5'/);
  });

  it('shows the URL before the first page and the cursor value after it', () => {
    const job = config.config.jobs[0]!;
    const state = createScrollerState(job, config.api, 0);
    expect(cursorOf(state)).toBe('https://api.example.com/a');
    const step = nextStep(state, { bytes: 10, hash: 'h', recordCount: 1, body: { next: 'tok en' } }, 0);
    expect(cursorOf(step.state)).toBe('tok en');
    const long = nextStep(state, { bytes: 10, hash: 'h', recordCount: 1, body: { next: 'x'.repeat(200) } }, 0);
    expect(cursorOf(long.state)).toHaveLength(78);
    const done = nextStep(step.state, { bytes: 10, hash: 'h2', recordCount: 1, body: {} }, 0);
    expect(cursorOf(done.state)).toBeNull();
  });
});
