import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { startEmulatorProcess } from './emulator-process';
import { DEFAULT_FILES_BUCKET, type DevStackMinio, type DevStackService } from './stack';

interface DevServicesOptions {
  /** Run a worker for the plugin inside the stack. Default true. */
  worker?: boolean;
  /** Storage token the emulator accepts; generated when absent. */
  token?: string;
  /** Bearer secret of the emulator's `/_emulator/*` admin endpoints; generated when absent. */
  adminToken?: string;
  /** Export slicing threshold of the emulator (bytes); default the emulator's. */
  sliceSizeBytes?: number;
}

/** The services the dev stack runs on top of Temporal and the object stores: the Storage API emulator, then a worker. */
export function devServices(options: DevServicesOptions = {}): Array<DevStackService<DevStackMinio>> {
  const services: Array<DevStackService<DevStackMinio>> = [emulatorService(options)];
  if (options.worker ?? true) services.push(workerService());
  return services;
}

/**
 * The Storage API emulator on MinIO, on Azurite when the stack runs `backend: 'azure'`, on fake-gcs-server with `gcp`; publishes `SAPI_URL`, `SAPI_IMPORT_URL`, `SAPI_TOKEN` and
 * `SAPI_EMULATOR_ADMIN_TOKEN` (the bearer secret of its `/_emulator/*` admin endpoints). It runs in a child process
 * (log: `<dataDir>/emulator.log`), started again on the same address when it dies, so that one bad load cannot take
 * Temporal and the worker down with it.
 */
export function emulatorService(options: DevServicesOptions = {}): DevStackService<DevStackMinio> {
  return async (stack) => {
    const token = options.token ?? `dev-${randomBytes(16).toString('hex')}`;
    const adminToken = options.adminToken ?? `dev-admin-${randomBytes(16).toString('hex')}`;
    const emulator = await startEmulatorProcess({
      logFile: join(stack.dataDir, 'emulator.log'),
      watchdogPidFile: join(stack.dataDir, 'stack.pids'),
      emulator: {
        port: 0,
        dataDir: join(stack.dataDir, 'emulator'),
        backend: stack.backend,
        // the S3 settings only where the files are in MinIO: on azure and gcp the emulator uses nothing of MinIO's
        ...(stack.backend === 'aws' && stack.minio
          ? {
              s3: {
                endpoint: stack.minio.endpoint,
                region: stack.minio.region,
                accessKeyId: stack.minio.accessKeyId,
                secretAccessKey: stack.minio.secretAccessKey,
                bucket: DEFAULT_FILES_BUCKET,
              },
            }
          : {}),
        ...(stack.azurite
          ? {
              abs: {
                blobEndpoint: stack.azurite.blobEndpoint,
                accountName: stack.azurite.accountName,
                accountKey: stack.azurite.accountKey,
                container: DEFAULT_FILES_BUCKET,
              },
            }
          : {}),
        ...(stack.fakeGcs ? { gcs: { endpoint: stack.fakeGcs.endpoint, projectId: stack.fakeGcs.projectId, bucket: DEFAULT_FILES_BUCKET } } : {}),
        tokens: [{ token, description: 'dev stack' }],
        adminToken,
        sliceSizeBytes: options.sliceSizeBytes,
      },
    });
    return {
      env: { SAPI_URL: emulator.url, SAPI_IMPORT_URL: emulator.importUrl, SAPI_TOKEN: token, SAPI_EMULATOR_ADMIN_TOKEN: adminToken },
      stop: () => emulator.stop(),
    };
  };
}

/** A worker for the plugin, configured from what the stack published so far. */
export function workerService(): DevStackService<DevStackMinio> {
  return async (stack) => {
    const { startWorker } = await import('../worker');
    const { loadSettings } = await import('../config');
    const running = await startWorker({ settings: loadSettings({ ...process.env, ...stack.env }) });
    return { env: {}, stop: () => running.stop() };
  };
}
