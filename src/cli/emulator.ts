import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { DEFAULT_FILES_BUCKET } from '../dev/stack';
import {
  DEFAULT_EMULATOR_HOST,
  DEFAULT_SLICE_SIZE_BYTES,
  type EmulatorAbsOptions,
  type EmulatorBackend,
  type EmulatorGcsOptions,
  type EmulatorS3Options,
  type EmulatorStore,
} from '../emulator/options';
import type { CliContext } from './context';
import { integerParser, onStopSignals, parsePositiveNumber } from './common';
import { describeFailure } from './failure';
import { SapiInvalidInputError } from '../errors';

/** Region used when `AWS_REGION` is not set (MinIO's default). */
const DEFAULT_EMULATOR_REGION = 'us-east-1';

/** `sapi-temporal emulator` flags as commander parses them. */
interface EmulatorFlags {
  port: number;
  host: string;
  dataDir: string;
  token?: string;
  adminToken?: string;
  sliceSizeMb?: number;
  publicUrl?: string;
  backend: EmulatorBackend;
  store: EmulatorStore;
  tableBackend: 'snowflake' | 'bigquery';
  /** False with `--no-sliced-exports`. */
  slicedExports: boolean;
  region?: string;
}

/** Where the CLI and the dev stack publish the secret of the emulator's `/_emulator/*` admin endpoints. */
const EMULATOR_ADMIN_TOKEN_ENV = 'SAPI_EMULATOR_ADMIN_TOKEN';

/**
 * The emulator's object storage from the environment: `AWS_ENDPOINT_URL_S3`, `AWS_ACCESS_KEY_ID`,
 * `AWS_SECRET_ACCESS_KEY` (required: a MinIO server and its root keys, for STS), `AWS_REGION` (default us-east-1),
 * `SAPI_EMULATOR_BUCKET` (default `sapi-files`).
 */
function emulatorS3(env: NodeJS.ProcessEnv): EmulatorS3Options {
  const required = ['AWS_ENDPOINT_URL_S3', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'] as const;
  const missing = required.filter((name) => !env[name]);
  if (missing.length > 0) {
    throw new SapiInvalidInputError(
      `${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not set: the emulator keeps files in a MinIO server and needs its endpoint and root keys ` +
        '(`sapi-temporal dev` runs the whole stack instead)',
    );
  }
  return {
    endpoint: env.AWS_ENDPOINT_URL_S3 ?? '',
    accessKeyId: env.AWS_ACCESS_KEY_ID ?? '',
    secretAccessKey: env.AWS_SECRET_ACCESS_KEY ?? '',
    region: env.AWS_REGION || DEFAULT_EMULATOR_REGION,
    bucket: env.SAPI_EMULATOR_BUCKET || DEFAULT_FILES_BUCKET,
  };
}

/**
 * The emulator's Azure Blob Storage from `AZURE_STORAGE_CONNECTION_STRING` (an account connection string with
 * `AccountName`, `AccountKey` and `BlobEndpoint`: Azurite's `http://127.0.0.1:10000/<account>`, or a real account's
 * endpoint) and `SAPI_EMULATOR_BUCKET` as the container (default `sapi-files`).
 */
export function emulatorAbs(env: NodeJS.ProcessEnv): EmulatorAbsOptions {
  const connection = env.AZURE_STORAGE_CONNECTION_STRING;
  const parts = new Map(
    (connection ?? '')
      .split(';')
      .map((pair) => pair.trim())
      .filter(Boolean)
      .map((pair) => [pair.slice(0, pair.indexOf('=')).toLowerCase(), pair.slice(pair.indexOf('=') + 1)] as const),
  );
  const missing = ['AccountName', 'AccountKey', 'BlobEndpoint'].filter((name) => !parts.get(name.toLowerCase()));
  if (!connection || missing.length > 0) {
    throw new SapiInvalidInputError(
      `AZURE_STORAGE_CONNECTION_STRING ${connection ? `lacks ${missing.join(', ')}` : 'is not set'}: --backend azure keeps files in an Azure Blob Storage account ` +
        '(Azurite) and needs "AccountName=…;AccountKey=…;BlobEndpoint=http://127.0.0.1:10000/<account>" (`sapi-temporal dev --backend azure` runs the whole stack instead)',
    );
  }
  return {
    blobEndpoint: parts.get('blobendpoint') as string,
    accountName: parts.get('accountname') as string,
    accountKey: parts.get('accountkey') as string,
    container: env.SAPI_EMULATOR_BUCKET || DEFAULT_FILES_BUCKET,
  };
}

/**
 * The emulator's Google Cloud Storage from `STORAGE_EMULATOR_HOST` (fake-gcs-server's `http://host:port`, the
 * variable Google's own clients read), `GOOGLE_CLOUD_PROJECT` (default `sapi-dev`) and `SAPI_EMULATOR_BUCKET` as the
 * bucket (default `sapi-files`).
 */
function emulatorGcs(env: NodeJS.ProcessEnv): EmulatorGcsOptions {
  const host = env.STORAGE_EMULATOR_HOST;
  if (!host || !/^https?:\/\//.test(host)) {
    throw new SapiInvalidInputError(
      `STORAGE_EMULATOR_HOST ${host ? `is ${JSON.stringify(host)}, not an http(s) URL` : 'is not set'}: --backend gcp keeps files in a fake-gcs-server ` +
        'and needs its address, e.g. STORAGE_EMULATOR_HOST=http://127.0.0.1:4443 (`sapi-temporal dev --backend gcp` runs the whole stack instead)',
    );
  }
  return { endpoint: host, projectId: env.GOOGLE_CLOUD_PROJECT || 'sapi-dev', bucket: env.SAPI_EMULATOR_BUCKET || DEFAULT_FILES_BUCKET };
}

/** `sapi-temporal emulator`: the Storage API emulator on an S3 or Azure endpoint from the environment, until SIGINT/SIGTERM. */
export function registerEmulatorCommand(program: Command, context: CliContext): void {
  program
    .command('emulator')
    .description(
      'run the Storage API emulator until Ctrl-C/SIGTERM; files go to the S3 endpoint in AWS_ENDPOINT_URL_S3 (MinIO, with ' +
        `AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_REGION, bucket SAPI_EMULATOR_BUCKET or ${DEFAULT_FILES_BUCKET})`,
    )
    .option('--port <port>', 'port to listen on (default: a free one)', integerParser(0), 0)
    .option('--host <host>', 'interface to listen on', DEFAULT_EMULATOR_HOST)
    .option('--data-dir <dir>', 'where tables, file records and jobs are kept (a restart on it keeps them)', '.data/emulator')
    .option('--token <token>', 'the Storage token the emulator accepts (default: a generated one, printed)')
    .option('--admin-token <secret>', `bearer secret of the /_emulator/* admin endpoints (default: ${EMULATOR_ADMIN_TOKEN_ENV}, else a generated one, printed)`)
    .option(
      '--public-url <url>',
      "base URL clients reach the emulator at, used in the index (the importer's address) and in url fields (default: http://<host>:<port>)",
    )
    .option('--slice-size-mb <mib>', `exports larger than this are sliced, in MiB (default ${DEFAULT_SLICE_SIZE_BYTES / 1024 / 1024})`, parsePositiveNumber)
    .addOption(
      new Option(
        '--backend <backend>',
        'file storage: aws (S3 from AWS_ENDPOINT_URL_S3 + keys), azure (Blob Storage from AZURE_STORAGE_CONNECTION_STRING) or gcp (Cloud Storage from STORAGE_EMULATOR_HOST)',
      )
        .choices(['aws', 'azure', 'gcp'])
        .default('aws'),
    )
    .addOption(
      new Option(
        '--store <store>',
        'where files, tables and records are kept: server (the object store of --backend; tables and records under --data-dir, kept across restarts) or ' +
          "memory (all in the emulator's memory, gone when it stops; answers as aws, files only through the importer, no other process needed)",
      )
        .choices(['server', 'memory'])
        .default('server'),
    )
    .addOption(
      new Option('--table-backend <backend>', "the stack's table backend the emulator answers as (types of typed tables, `backend` fields; docs/emulator.md)")
        .choices(['snowflake', 'bigquery'])
        .default('snowflake'),
    )
    .option('--no-sliced-exports', 'answer table exports as one file with a header (default: sliced and headerless, as Snowflake and BigQuery stacks do)')
    .option('--region <region>', "the stack's region on file resources (default: AWS_REGION on aws, else us-east-1)")
    .action(async (flags: EmulatorFlags) => {
      try {
        if (flags.port > 65535) throw new SapiInvalidInputError(`--port must be 0–65535, got ${flags.port}`);
        if (flags.store === 'memory' && flags.backend !== 'aws') {
          throw new SapiInvalidInputError(
            `--store memory answers as an aws stack and keeps files in memory; --backend ${flags.backend} needs --store server and its object-storage server`,
          );
        }
        const storage =
          flags.store === 'memory'
            ? { store: 'memory' as const }
            : flags.backend === 'azure'
              ? { backend: 'azure' as const, abs: emulatorAbs(context.env) }
              : flags.backend === 'gcp'
                ? { backend: 'gcp' as const, gcs: emulatorGcs(context.env) }
                : { backend: 'aws' as const, s3: emulatorS3(context.env) };
        const { createEmulator } = await import('../emulator');
        const token = flags.token ?? `emu-${randomBytes(16).toString('hex')}`;
        const adminToken = flags.adminToken ?? (context.env[EMULATOR_ADMIN_TOKEN_ENV] || `emu-admin-${randomBytes(16).toString('hex')}`);
        const dataDir = resolve(flags.dataDir);
        const emulator = await createEmulator({
          port: flags.port,
          host: flags.host,
          dataDir,
          ...storage,
          tokens: [{ token, description: 'sapi-temporal emulator' }],
          adminToken,
          publicUrl: flags.publicUrl,
          sliceSizeBytes: flags.sliceSizeMb === undefined ? undefined : Math.round(flags.sliceSizeMb * 1024 * 1024),
          tableBackend: flags.tableBackend,
          slicedExports: flags.slicedExports,
          ...(flags.region ? { region: flags.region } : {}),
        });
        const env = { SAPI_URL: emulator.url, SAPI_IMPORT_URL: emulator.importUrl, SAPI_TOKEN: token, [EMULATOR_ADMIN_TOKEN_ENV]: adminToken };
        const width = Math.max(...Object.keys(env).map((key) => key.length));
        process.stdout.write(`Storage API emulator is up (${flags.store === 'memory' ? `data in memory, temp files in ${dataDir}` : `data in ${dataDir}`}):\n`);
        for (const [key, value] of Object.entries(env)) process.stdout.write(`  ${key.padEnd(width)}  ${value}\n`);
        process.stdout.write('press Ctrl-C to stop\n');
        let release = () => undefined as void;
        await new Promise<void>((stop) => {
          release = onStopSignals(['SIGINT', 'SIGTERM'], () => {
            process.stderr.write('stopping the emulator (signal again to exit now)\n');
            stop();
          });
        });
        try {
          await emulator.close();
        } finally {
          release();
        }
      } catch (err) {
        throw new Error(describeFailure(err, 'emulator'), { cause: err });
      }
    });
}
