import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMinio, type MinioHandle } from '../../../src/dev/minio';

/**
 * A private MinIO for one test file, on free ports, with a static KMS key so SSE-S3 (`AES256`, which the official
 * Python client always sends) is accepted. Uses the dev stack's `startMinio`.
 */
export async function startTestMinio(): Promise<MinioHandle & { cleanup(): Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'sapi-emulator-minio-'));
  process.env.MINIO_KMS_SECRET_KEY ??= `sapi-emulator-key:${randomBytes(32).toString('base64')}`;
  const minio = await startMinio({ dataDir });
  return {
    ...minio,
    cleanup: async () => {
      await minio.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
