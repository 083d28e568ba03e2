import type { createS3Client as CreateS3Client } from '../../../src/object-storage/s3-client';

/** A resolved client setting: a value, or the provider the SDK keeps for it. */
const settingOf = <T>(setting: T | (() => Promise<T>)): Promise<T> =>
  typeof setting === 'function' ? (setting as () => Promise<T>)() : Promise.resolve(setting);

describe("the SDK's settings from the environment", () => {
  const saved = { fips: process.env['AWS_USE_FIPS_ENDPOINT'], retry: process.env['AWS_RETRY_MODE'] };
  afterEach(() => {
    for (const [name, value] of [
      ['AWS_USE_FIPS_ENDPOINT', saved.fips],
      ['AWS_RETRY_MODE', saved.retry],
    ] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it('are honoured by every client, and read once per process instead of once per client (a client per small import)', async () => {
    let createS3Client!: typeof CreateS3Client;
    jest.isolateModules(() => {
      ({ createS3Client } = jest.requireActual<{ createS3Client: typeof CreateS3Client }>('../../../src/object-storage/s3-client'));
    });
    process.env['AWS_USE_FIPS_ENDPOINT'] = 'true';
    process.env['AWS_RETRY_MODE'] = 'adaptive';
    const first = createS3Client({ region: 'eu-central-1' });
    expect(await first.config.useFipsEndpoint()).toBe(true);
    expect(await settingOf(first.config.retryMode)).toBe('adaptive');

    process.env['AWS_USE_FIPS_ENDPOINT'] = 'false';
    process.env['AWS_RETRY_MODE'] = 'standard';
    const second = createS3Client({ region: 'eu-central-1', endpoint: 'http://127.0.0.1:9000' });
    expect(await second.config.useFipsEndpoint()).toBe(true);
    expect(await settingOf(second.config.retryMode)).toBe('adaptive');
    first.destroy();
    second.destroy();
  });
});
