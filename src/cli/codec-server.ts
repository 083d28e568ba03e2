import { type Command } from 'commander';
import { SapiInvalidInputError } from '../errors';
import { CODEC_KEYS_ENV, CODEC_KEY_FILE_ENV, loadCodecKeys } from '../codec/keys';
import { CODEC_SERVER_TOKEN_ENV, DEFAULT_CODEC_SERVER_HOST, DEFAULT_CODEC_SERVER_PORT } from '../codec/server';
import type { CliContext } from './context';
import { integerParser, onStopSignals, parseList } from './common';

export { CODEC_SERVER_TOKEN_ENV };
/** Environment variable with the default CORS origins (comma-separated), e.g. the Temporal UI's. */
const CODEC_SERVER_CORS_ENV = 'SAPI_CODEC_SERVER_CORS_ORIGINS';

/** `sapi-temporal codec-server` flags as commander parses them. */
interface CodecServerFlags {
  port: number;
  host: string;
  corsOrigin?: string[];
}

/** `sapi-temporal codec-server`: decodes (and encodes) payloads for the Temporal UI and CLI, until SIGINT/SIGTERM. */
export function registerCodecServerCommand(program: Command, context: CliContext): void {
  program
    .command('codec-server')
    .description(
      `serve POST /encode and /decode for the Temporal UI and \`temporal --codec-endpoint\`, with the keys of ${CODEC_KEYS_ENV} ` +
        `(or ${CODEC_KEY_FILE_ENV}), behind the bearer token in ${CODEC_SERVER_TOKEN_ENV}, until Ctrl-C/SIGTERM`,
    )
    .option('--port <port>', `port to listen on (0: a free one)`, integerParser(0), DEFAULT_CODEC_SERVER_PORT)
    .option('--host <host>', 'interface to listen on', DEFAULT_CODEC_SERVER_HOST)
    .option(
      '--cors-origin <origins>',
      `browser origin(s) allowed to call it, comma-separated or repeated: the Temporal UI's, e.g. http://localhost:8233 (default: ${CODEC_SERVER_CORS_ENV}, else none)`,
      (value: string, previous: string[] | undefined) => [...(previous ?? []), ...parseList(value)],
    )
    .action(async (flags: CodecServerFlags) => {
      if (flags.port > 65535) throw new SapiInvalidInputError(`--port must be 0–65535, got ${flags.port}`);
      const token = context.env[CODEC_SERVER_TOKEN_ENV] ?? '';
      if (token.trim() === '') {
        throw new SapiInvalidInputError(
          `${CODEC_SERVER_TOKEN_ENV} is not set: the codec server decrypts histories and only serves callers with this bearer token (e.g. \`openssl rand -hex 24\`)`,
        );
      }
      let keys;
      try {
        keys = loadCodecKeys(context.env);
      } catch (err) {
        throw new SapiInvalidInputError(err instanceof Error ? err.message : String(err), undefined, { cause: err });
      }
      if (!keys)
        throw new SapiInvalidInputError(`no codec keys: set ${CODEC_KEYS_ENV}=id:base64key[,…] or ${CODEC_KEY_FILE_ENV}, the same keys as the workers'`);
      const corsOrigins = flags.corsOrigin ?? parseOrigins(context.env[CODEC_SERVER_CORS_ENV]);
      const { createCodecServer, EncryptionCodec } = await import('../codec');
      const server = await createCodecServer({ codec: new EncryptionCodec(keys), token, corsOrigins, port: flags.port, host: flags.host });
      process.stdout.write(
        `codec server at ${server.url} (keys: ${keys.map((key) => key.id).join(', ')}; CORS origins: ${corsOrigins.length ? corsOrigins.join(', ') : 'none'})\n` +
          `  temporal workflow show -w <id> --codec-endpoint ${server.url} --codec-auth "Bearer $${CODEC_SERVER_TOKEN_ENV}"\n`,
      );
      await new Promise<void>((resolve) => {
        const release = onStopSignals(['SIGINT', 'SIGTERM'], () => {
          release();
          void server.close().finally(resolve);
        });
      });
    });
}

function parseOrigins(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((origin) => origin.trim())
    .filter((origin) => origin !== '');
}
