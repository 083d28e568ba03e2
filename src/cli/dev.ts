import { Option, type Command } from 'commander';
import { resolve } from 'node:path';
import { CODEC_KEYS_ENV } from '../codec/keys';
import { CODEC_SERVER_TOKEN_ENV } from '../codec/server';
import { devCodecFromEnv, startDevStack, type DevBackend } from '../dev/stack';
import { devServices } from '../dev/services';

/** `sapi-temporal dev`: the whole stack in the foreground until Ctrl-C. */
export function registerDevCommand(program: Command): void {
  program
    .command('dev')
    .description(
      'run the dev stack (Temporal dev server, MinIO, Azurite with --backend azure, fake-gcs-server with --backend gcp, Storage API emulator, worker) in the foreground; ' +
        `with codec keys (${CODEC_KEYS_ENV} or SAPI_CODEC_KEY_FILE) also a codec server the Temporal UI decodes payloads through`,
    )
    .option('--env-file <file>', 'write the addresses as KEY=VALUE lines here once everything is healthy')
    .option('--write-env <file>', 'same as --env-file')
    .option('--data-dir <dir>', 'where the stack keeps its data (SQLite, objects, tables, logs)', '.data/dev')
    .option('--no-worker', 'do not run a worker in the stack')
    .addOption(
      new Option('--backend <backend>', "the emulator's file storage: aws (MinIO), azure (Azurite) or gcp (fake-gcs-server)")
        .choices(['aws', 'azure', 'gcp'])
        .default('aws'),
    )
    .action(async (options: { envFile?: string; writeEnv?: string; dataDir: string; worker: boolean; backend: DevBackend }) => {
      const envFile = options.envFile ?? options.writeEnv;
      const stack = await startDevStack({
        dataDir: resolve(options.dataDir),
        backend: options.backend,
        services: devServices({ worker: options.worker }),
        codec: devCodecFromEnv(),
      });
      const stop = async () => {
        process.stderr.write('\nstopping the dev stack…\n');
        await stack.stop();
        process.exit(0);
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      const width = Math.max(...Object.keys(stack.env).map((key) => key.length));
      process.stdout.write(`dev stack is up (data in ${stack.dataDir}):\n`);
      for (const [key, value] of Object.entries(stack.env)) process.stdout.write(`  ${key.padEnd(width)}  ${key === CODEC_KEYS_ENV ? keyIds(value) : value}\n`);
      if (stack.codecServer) {
        process.stdout.write(
          `the Temporal UI decodes payloads through the codec server (its token in the UI's codec endpoint path); from a shell:\n` +
            `  temporal workflow show -w <id> --codec-endpoint $SAPI_CODEC_SERVER_URL --codec-auth "Bearer $${CODEC_SERVER_TOKEN_ENV}"\n`,
        );
      }
      if (envFile) {
        stack.writeEnvFile(resolve(envFile));
        process.stdout.write(`addresses written to ${envFile} (source it: set -a; . ${envFile}; set +a)\n`);
      }
      process.stdout.write('press Ctrl-C to stop\n');
      await new Promise(() => undefined);
    });
}

/** `k2:***,k1:***`: the key ids without the keys, for the terminal. */
function keyIds(value: string): string {
  return value
    .split(',')
    .map((entry) => `${entry.split(':')[0]?.trim()}:***`)
    .join(',');
}
