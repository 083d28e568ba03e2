import { join } from 'node:path';

// deploy/worker-healthcheck.js is plain CommonJS (the image runs it with node, no build)
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { healthcheckSettings } = require(join(__dirname, '..', '..', '..', 'deploy', 'worker-healthcheck.js')) as {
  healthcheckSettings(env: NodeJS.ProcessEnv): { connection: Record<string, unknown>; namespace: string; taskQueue: string; host: string };
};

describe('the deploy health check', () => {
  it("connects with the worker's settings: address, namespace, API key (TLS on) and the TLS files", () => {
    const settings = healthcheckSettings({
      HOME: '/nonexistent',
      TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233',
      TEMPORAL_NAMESPACE: 'ns.acct',
      TEMPORAL_API_KEY: 'secret-key',
      TEMPORAL_TLS_SERVER_NAME: 'ns.acct.tmprl.cloud',
      TEMPORAL_TASK_QUEUE: 'q',
      SAPI_HEALTHCHECK_HOST: 'box',
    });
    expect(settings).toMatchObject({ namespace: 'ns.acct', taskQueue: 'q', host: 'box' });
    expect(settings.connection).toMatchObject({
      address: 'ns.acct.tmprl.cloud:7233',
      apiKey: 'secret-key',
      tls: { serverNameOverride: 'ns.acct.tmprl.cloud' },
    });
  });

  it('defaults like the worker: the dev server, namespace default, queue sapi-temporal, plain text', () => {
    const settings = healthcheckSettings({ HOME: '/nonexistent' });
    expect(settings).toMatchObject({ namespace: 'default', taskQueue: 'sapi-temporal', connection: { address: 'localhost:7233' } });
    expect(settings.connection.apiKey).toBeUndefined();
    expect(settings.connection.tls).toBeUndefined();
  });
});
