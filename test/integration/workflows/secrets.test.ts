import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createSealer } from '../../../src/activities/sealing';
import type { PreparedUpload } from '../../../src/activities/prepare-file';
import type { TemporaryCredentials } from '../../../src/object-storage/s3-client';
import { startSapiTestEnv, type SapiTestEnv } from '../../harness/sapi-env';
import { activityResults, historyText } from '../../harness/history';

describe('secrets stay out of workflow history', () => {
  let env: SapiTestEnv;
  beforeAll(async () => (env = await startSapiTestEnv('secrets')));
  afterAll(() => env?.stop());

  it('keeps the Storage token and the temporary credentials out of import and export histories', async () => {
    const source = join(env.dataDir, 'secret.csv');
    writeFileSync(source, 'id,v\n1,a\n2,b\n');
    const importHandle = await env.client.workflow.start('importTableWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: `secrets-import-${Date.now()}`,
      args: [{ source, bucketId: 'in.c-secrets', createBucket: true, table: 't', polling: { initialMs: 200 } }],
    });
    await importHandle.result();
    const exportHandle = await env.client.workflow.start('exportTableWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: `secrets-export-${Date.now()}`,
      args: [{ tableId: 'in.c-secrets.t', destination: join(env.dataDir, 'secret-out.csv'), polling: { initialMs: 200 } }],
    });
    await exportHandle.result();

    // a small import prepares its file in prepareImport (the short path), a larger one in prepareFile
    const [begun] = await activityResults<{ target: PreparedUpload }>(importHandle, 'prepareImport');
    const credentials = createSealer(env.emulator.token).open<TemporaryCredentials>(begun!.target.sealedCredentials);
    expect(credentials.SecretAccessKey.length).toBeGreaterThan(8); // the real upload credentials, recovered with the token

    for (const handle of [importHandle, exportHandle]) {
      const text = await historyText(handle);
      expect(text).toContain('in.c-secrets'); // the scan does see the history's payloads
      expect(text).not.toContain(env.emulator.token);
      expect(text).not.toContain(credentials.SecretAccessKey);
      expect(text).not.toContain(credentials.SessionToken);
      expect(text).not.toMatch(/SecretAccessKey|SessionToken|X-Amz-Signature/);
    }
  });
});
