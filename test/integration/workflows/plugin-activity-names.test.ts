/**
 * A worker's own activities next to the plugin's (issue 35): `SimplePlugin` merges activity maps, so a user's
 * `getJob` would be replaced by the plugin's without a word. A real `Worker.create` with the plugin and a user
 * activity named like one of the plugin's fails at start with `SAPI_WORKER_CONFIG` naming every colliding name; with
 * distinct names the worker starts and both sets are registered.
 */
import { readFileSync } from 'node:fs';
import { NativeConnection, Worker } from '@temporalio/worker';
import { loadSettings } from '../../../src/config';
import { SapiError } from '../../../src/errors';
import { SapiPlugin } from '../../../src/plugin';
import { testStack, uniqueTaskQueue } from '../../harness/stack-state';

describe("a worker's own activities and the plugin's", () => {
  const stack = testStack();
  let connection: NativeConnection;
  const workflowBundle = { code: readFileSync(stack.workflowBundlePath, 'utf8') };
  const plugins: SapiPlugin[] = [];
  const plugin = () => {
    const created = new SapiPlugin({ settings: loadSettings({}), startChecks: false });
    plugins.push(created);
    return created;
  };

  beforeAll(async () => {
    connection = await NativeConnection.connect({ address: stack.temporalAddress });
  });
  afterAll(async () => {
    await Promise.all(plugins.map((p) => p.close()));
    await connection?.close();
  });

  it("fails the worker at start, naming each colliding name, when a user activity has the name of one of the plugin's", async () => {
    const mine = { getJob: async () => 'mine', uploadFile: async () => 'mine', lookupCustomer: async () => 'mine' };
    const err = await Worker.create({
      connection,
      namespace: stack.namespace,
      taskQueue: uniqueTaskQueue('names-collide'),
      workflowBundle,
      activities: mine,
      plugins: [plugin()],
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(SapiError);
    expect((err as SapiError).code).toBe('SAPI_WORKER_CONFIG');
    expect((err as Error).message).toContain('"getJob", "uploadFile"');
    expect((err as Error).message).not.toContain('lookupCustomer');
    expect((err as Error).message).toContain("sapi-temporal's activities");
  });

  it("starts with distinct names, registering both the user's activities and the plugin's", async () => {
    const lookupCustomer = async () => 'mine';
    const worker = await Worker.create({
      connection,
      namespace: stack.namespace,
      taskQueue: uniqueTaskQueue('names-distinct'),
      workflowBundle,
      activities: { lookupCustomer },
      plugins: [plugin()],
    });
    try {
      const registered = worker.options.activities;
      expect(registered.get('lookupCustomer')).toBe(lookupCustomer);
      expect(registered.has('getJob')).toBe(true);
      expect(registered.has('uploadFile')).toBe(true);
    } finally {
      const running = worker.run();
      worker.shutdown();
      await running;
    }
  });
});
