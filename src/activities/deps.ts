import type { S3Client } from '@aws-sdk/client-s3';
import { connectionFor, type Settings } from '../config';
import { createStorageClient, type StorageClient } from '../storage-api';
import { createS3Client } from '../object-storage/s3-client';
import { createHttpPools, type HttpPools } from '../http';
import { activityDeadline } from './context';
import { createSealer, type Sealer } from './sealing';
import { createConfinement, type Confinement } from './confine';

/** What the activities need from the outside world; built once per worker by {@link createActivityDeps}. */
export interface ActivityDeps {
  settings: Settings;
  /** The Storage client of a named connection (cached). */
  storage(connection?: string): StorageClient;
  /** Seals/opens temporary credentials with a key derived from the connection's token. */
  sealer(connection?: string): Sealer;
  /** S3 client with the worker's own credentials chain, for `s3://` sources and destinations. */
  userS3(): S3Client;
  /** The worker's HTTP connection pools (Storage API, extracted APIs, sources and presigned URLs), closed with it. */
  http: HttpPools;
  /** Every source and destination a workflow input names is opened through this: the worker's input policy. */
  confinement: Confinement;
  /** Closes the clients. */
  close(): Promise<void>;
}

/** Builds the activity dependencies from the worker's settings. */
export function createActivityDeps(settings: Settings): ActivityDeps {
  const clients = new Map<string, StorageClient>();
  const sealers = new Map<string, Sealer>();
  let s3: S3Client | undefined;
  const http = createHttpPools(settings.policy);
  const named = (connection?: string) => connection ?? 'default';
  const userS3 = (): S3Client => {
    const { endpoint, region, accessKeyId, secretAccessKey } = settings.s3;
    if (!s3) {
      s3 = createS3Client({ endpoint, region, deadline: activityDeadline });
      // explicit keys from the settings win over the default chain (tests and the dev stack pass MinIO's)
      if (accessKeyId && secretAccessKey) s3.config.credentials = async () => ({ accessKeyId, secretAccessKey });
    }
    return s3;
  };
  const tokens = Object.keys(settings.connections)
    .sort()
    .map((name) => settings.connections[name]!.token);
  const confinement = createConfinement({
    policy: settings.policy,
    s3: userS3,
    sources: http.sources,
    stagingUrl: settings.stagingUrl,
    grantSecret: tokens.length ? tokens.join('\n') : undefined,
  });
  return {
    settings,
    http,
    confinement,
    storage(connection) {
      const name = named(connection);
      let client = clients.get(name);
      if (!client) {
        const { url, token, importUrl, branchId } = connectionFor(settings, name);
        client = createStorageClient({ url, token, importUrl, branchId, dispatcher: http.storage, deadline: activityDeadline });
        clients.set(name, client);
      }
      return client;
    },
    sealer(connection) {
      const name = named(connection);
      let sealer = sealers.get(name);
      if (!sealer) {
        sealer = createSealer(connectionFor(settings, name).token);
        sealers.set(name, sealer);
      }
      return sealer;
    },
    userS3,
    async close() {
      await Promise.all([...clients.values()].map((client) => client.close()));
      s3?.destroy();
      await http.close();
    },
  };
}
