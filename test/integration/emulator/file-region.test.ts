import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAzurite, type AzuriteHandle } from '../../../src/dev/azurite';
import { startFakeGcs, type FakeGcsHandle } from '../../../src/dev/gcs';
import { createEmulator, type EmulatorHandle, type EmulatorOptions } from '../../../src/emulator';
import { TOKEN, client } from './support';

/**
 * File resources carry the stack's `region` on every backend, as the service's documentation shows them for AWS,
 * Azure and GCP alike; `owner.region` of `tokens/verify` is the same.
 */
describe('region on file resources of the Azure and GCS backends', () => {
  let work: string;
  let azurite: AzuriteHandle;
  let gcs: FakeGcsHandle;
  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'sapi-emulator-region-'));
    [azurite, gcs] = await Promise.all([startAzurite({ dataDir: join(work, 'azurite') }), startFakeGcs({ dataDir: join(work, 'gcs') })]);
  });
  afterAll(async () => {
    await Promise.all([azurite?.stop(), gcs?.stop()]);
    rmSync(work, { recursive: true, force: true });
  });

  async function withEmulator(options: Partial<EmulatorOptions>, check: (emulator: EmulatorHandle) => Promise<void>): Promise<void> {
    const emulator = await createEmulator({ port: 0, dataDir: mkdtempSync(join(work, 'data-')), tokens: [{ token: TOKEN, id: 101 }], ...options });
    try {
      await check(emulator);
    } finally {
      await emulator.close();
    }
  }

  async function expectRegion(emulator: EmulatorHandle, provider: string, region: string): Promise<void> {
    const api = client(emulator);
    const prepared = await api('POST', '/files/prepare', { json: { name: 'r.csv', federationToken: true } });
    expect(prepared.status).toBe(201);
    expect(prepared.body).toMatchObject({ provider, region });
    expect((await api('GET', `/files/${prepared.body.id}`)).body).toMatchObject({ provider, region });
    expect((await api('GET', '/files')).body[0]).toMatchObject({ id: prepared.body.id, region });
    expect((await api('GET', '/tokens/verify')).body.owner).toMatchObject({ region, fileStorageProvider: provider });
  }

  test('on Azure a file resource has region us-east-1 by default, or the region option', async () => {
    const abs = { blobEndpoint: azurite.blobEndpoint, accountName: azurite.accountName, accountKey: azurite.accountKey, container: 'region-files' };
    await withEmulator({ backend: 'azure', abs }, (emulator) => expectRegion(emulator, 'azure', 'us-east-1'));
    await withEmulator({ backend: 'azure', abs, region: 'westeurope' }, (emulator) => expectRegion(emulator, 'azure', 'westeurope'));
  });

  test('on GCS a file resource has region us-east-1 by default, or the region option', async () => {
    const options = { backend: 'gcp' as const, gcs: { endpoint: gcs.endpoint, projectId: gcs.projectId, bucket: 'region-files' } };
    await withEmulator(options, (emulator) => expectRegion(emulator, 'gcp', 'us-east-1'));
    await withEmulator({ ...options, region: 'europe-west1' }, (emulator) => expectRegion(emulator, 'gcp', 'europe-west1'));
  });
});
