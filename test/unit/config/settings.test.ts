import { connectionFor, loadSettings } from '../../../src/config';
import { toApplicationFailure } from '../../../src/errors';

describe('worker settings from the environment', () => {
  it('reads the default connection, named connections and the staging URL without mistaking it for a connection', () => {
    const settings = loadSettings({
      SAPI_URL: 'https://connection.example.com',
      SAPI_TOKEN: 'main-token',
      SAPI_EU_URL: 'https://connection.eu.example.com',
      SAPI_EU_TOKEN: 'eu-token',
      SAPI_EU_BRANCH_ID: '123',
      SAPI_IMPORT_URL: 'https://import.example.com',
      SAPI_STAGING_URL: 's3://staging/extract',
    });
    expect(Object.keys(settings.connections).sort()).toEqual(['default', 'eu']);
    expect(settings.connections.default).toEqual({ url: 'https://connection.example.com', token: 'main-token', importUrl: 'https://import.example.com' });
    expect(settings.connections.eu).toMatchObject({ token: 'eu-token', branchId: '123' });
    expect(settings.stagingUrl).toBe('s3://staging/extract');
    expect(settings.temporal).toEqual({ address: 'localhost:7233', namespace: 'default', taskQueue: 'sapi-temporal' });
    expect(Object.isFrozen(settings.connections.default)).toBe(true);
  });

  it('names every invalid variable in one error', () => {
    expect(() => loadSettings({ SAPI_URL: 'not a url', SAPI_PART_SIZE_MIB: '1' })).toThrow(
      /SAPI_URL must be an http\(s\) URL.*SAPI_TOKEN is required.*SAPI_PART_SIZE_MIB/,
    );
  });

  it('reads the worker tuning variables, with documented defaults, and rejects nonsense by name', () => {
    const base = { SAPI_URL: 'https://c.example.com', SAPI_TOKEN: 't' };
    expect(loadSettings(base).worker).toEqual({ maxCachedWorkflows: 1000, maxConcurrentActivities: 100, maxConcurrentWorkflowTasks: 40 });
    expect(
      loadSettings({ ...base, SAPI_MAX_CACHED_WORKFLOWS: '0', SAPI_MAX_CONCURRENT_ACTIVITIES: '20', SAPI_MAX_CONCURRENT_WORKFLOW_TASKS: '8' }).worker,
    ).toEqual({
      maxCachedWorkflows: 0,
      maxConcurrentActivities: 20,
      maxConcurrentWorkflowTasks: 8,
    });
    expect(() => loadSettings({ ...base, SAPI_MAX_CACHED_WORKFLOWS: 'many', SAPI_MAX_CONCURRENT_ACTIVITIES: '0' })).toThrow(
      /SAPI_MAX_CACHED_WORKFLOWS.*SAPI_MAX_CONCURRENT_ACTIVITIES/,
    );
  });

  it('reads where load receipts go: the default table, another one, or off; refuses what is not a table id by name', () => {
    const base = { SAPI_URL: 'https://c.example.com', SAPI_TOKEN: 't' };
    expect(loadSettings(base).receiptsTable).toBe('in.c-sapi-temporal.receipts');
    expect(loadSettings({ ...base, SAPI_RECEIPTS_TABLE: 'in.c-audit.loads' }).receiptsTable).toBe('in.c-audit.loads');
    expect(loadSettings({ ...base, SAPI_RECEIPTS_TABLE: 'off' }).receiptsTable).toBeNull();
    expect(() => loadSettings({ ...base, SAPI_RECEIPTS_TABLE: 'receipts' })).toThrow(
      /SAPI_RECEIPTS_TABLE must be a table id like in\.c-sapi-temporal\.receipts, or off/,
    );
  });

  it('says how to configure a connection a workflow names but the worker lacks', () => {
    const settings = loadSettings({ SAPI_URL: 'https://c.example.com', SAPI_TOKEN: 't' });
    expect(() => connectionFor(settings, 'eu')).toThrow('unknown Storage connection "eu" (configured: default); set SAPI_EU_URL and SAPI_EU_TOKEN');
  });

  it('fails an unknown connection with SAPI_INVALID_INPUT, never retried (a typo in --connection is not retried forever)', () => {
    const settings = loadSettings({ SAPI_URL: 'https://c.example.com', SAPI_TOKEN: 't', SAPI_EU_URL: 'https://eu.example.com', SAPI_EU_TOKEN: 'e' });
    let thrown: unknown;
    try {
      connectionFor(settings, 'ue');
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toMatchObject({ code: 'SAPI_INVALID_INPUT', retryable: false, details: { connection: 'ue', configured: ['default', 'eu'] } });
    expect(toApplicationFailure(thrown)).toMatchObject({
      type: 'SAPI_INVALID_INPUT',
      nonRetryable: true,
      message: expect.stringContaining('(configured: default, eu)'),
    });
  });
});
