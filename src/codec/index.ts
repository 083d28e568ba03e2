import type { DataConverter } from '@temporalio/common';
import { EncryptionCodec } from './encryption-codec';
import { loadCodecKeys, type CodecKey } from './keys';

export { EncryptionCodec, CodecDecryptError, ENCRYPTED_ENCODING, KEY_ID_METADATA } from './encryption-codec';
export { loadCodecKeys, parseCodecKeys, CODEC_KEYS_ENV, CODEC_KEY_FILE_ENV, CODEC_KEY_BYTES, type CodecKey } from './keys';

/** Module that exports the failure converter which encodes failure messages and stack traces (so they are encrypted). */
export const failureConverterPath: string = require.resolve('./failure-converter');

/**
 * The data converter for clients and workers when the codec is on: the encryption codec (after any codecs already
 * set, so it is the outermost layer) and failure messages/stack traces moved into encrypted payloads. `undefined`
 * keys: `undefined` (codec off, Temporal's defaults).
 */
export function codecDataConverter(keys: readonly CodecKey[] | undefined, existing: DataConverter = {}): DataConverter | undefined {
  if (!keys) return undefined;
  return {
    ...existing,
    payloadCodecs: [...(existing.payloadCodecs ?? []), new EncryptionCodec(keys)],
    failureConverterPath: existing.failureConverterPath ?? failureConverterPath,
  };
}

/** {@link codecDataConverter} with the keys of `env` (`SAPI_CODEC_KEYS` or `SAPI_CODEC_KEY_FILE`); `undefined` when none. */
export function dataConverterFromEnv(env: NodeJS.ProcessEnv = process.env): DataConverter | undefined {
  return codecDataConverter(loadCodecKeys(env));
}
export {
  createCodecServer,
  DEFAULT_CODEC_SERVER_PORT,
  DEFAULT_CODEC_SERVER_HOST,
  CODEC_SERVER_ALLOWED_HEADERS,
  type CodecServerOptions,
  type CodecServerHandle,
} from './server';
