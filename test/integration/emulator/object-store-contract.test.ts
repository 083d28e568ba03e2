import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_CREDENTIALS_TTL_SECONDS, DEFAULT_PRESIGN_TTL_SECONDS } from '../../../src/emulator';
import { AbsObjectStore } from '../../../src/emulator/abs-store';
import { GcsObjectStore } from '../../../src/emulator/gcs-store';
import { S3ObjectStore } from '../../../src/emulator/object-store';
import { startAzurite } from '../../../src/dev/azurite';
import { startFakeGcs } from '../../../src/dev/gcs';
import { objectStoreContract } from '../../harness/object-store-contract';
import { testStack } from '../../harness/stack-state';

// The contract of test/harness/object-store-contract.ts on each real store the emulator has an adapter for; the
// memory store runs it in the unit tier (test/unit/emulator/memory-store-contract.test.ts).

objectStoreContract(
  'S3 on MinIO',
  async () => {
    // the test stack's MinIO, in a bucket of its own (every run's keys under a prefix of their own)
    const { endpoint, region, accessKeyId, secretAccessKey } = testStack().minio;
    const store = new S3ObjectStore(
      { endpoint, region, accessKeyId, secretAccessKey, bucket: 'sapi-contract' },
      DEFAULT_CREDENTIALS_TTL_SECONDS,
      DEFAULT_PRESIGN_TTL_SECONDS,
    );
    return { store, stop: async () => undefined };
  },
  { key: 'uploadParams', readKey: 'credentials' },
);

objectStoreContract(
  'Azure Blob Storage on Azurite',
  async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'sapi-contract-azurite-'));
    const azurite = await startAzurite({ dataDir });
    const store = new AbsObjectStore(
      { blobEndpoint: azurite.blobEndpoint, accountName: azurite.accountName, accountKey: azurite.accountKey, container: 'sapi-contract' },
      DEFAULT_CREDENTIALS_TTL_SECONDS,
      DEFAULT_PRESIGN_TTL_SECONDS,
    );
    return {
      store,
      stop: async () => {
        await azurite.stop();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  },
  { key: 'absUploadParams', readKey: 'absCredentials' },
);

objectStoreContract(
  'Cloud Storage on fake-gcs-server',
  async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'sapi-contract-gcs-'));
    const gcs = await startFakeGcs({ dataDir });
    const store = new GcsObjectStore({ endpoint: gcs.endpoint, projectId: gcs.projectId, bucket: 'sapi-contract' }, DEFAULT_CREDENTIALS_TTL_SECONDS);
    return {
      store,
      stop: async () => {
        await gcs.stop();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  },
  { key: 'gcsUploadParams', readKey: 'gcsCredentials' },
);
