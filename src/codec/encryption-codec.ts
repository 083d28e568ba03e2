import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { CODEC_KEYS_ENV, type CodecKey } from './keys';

/** `encoding` metadata of an encrypted payload (the value Temporal's samples and UI use). */
export const ENCRYPTED_ENCODING = 'binary/encrypted';
/** Metadata key naming the key that encrypted a payload, so a rotated key list still finds it. */
export const KEY_ID_METADATA = 'encryption-key-id';

const ALGORITHM = 'aes-256-gcm';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A payload the codec cannot decrypt: unknown key id, wrong key bytes, or damaged data. */
export class CodecDecryptError extends Error {
  override readonly name = 'CodecDecryptError';
}

/**
 * AES-256-GCM payload encryption. The whole original payload (its metadata and data, protobuf-encoded) is
 * encrypted with the first key; the result carries `encoding: binary/encrypted` and `encryption-key-id`, with
 * `iv | ciphertext | tag` as data and the key id as additional authenticated data. Decoding picks the key by id,
 * so payloads written before a rotation still decrypt while their key stays listed. Payloads that are not
 * encrypted (history from before the codec was turned on) pass through unchanged.
 */
export class EncryptionCodec implements PayloadCodec {
  private readonly encryptKey: { id: string; bytes: Buffer };
  private readonly keys: ReadonlyMap<string, Buffer>;

  constructor(keys: readonly CodecKey[]) {
    const [first] = keys;
    if (!first) throw new Error(`the payload codec needs at least one key (${CODEC_KEYS_ENV}=id:base64key)`);
    this.keys = new Map(keys.map(({ id, key }) => [id, Buffer.from(key, 'base64')]));
    this.encryptKey = { id: first.id, bytes: this.keys.get(first.id)! };
  }

  /** Id of the key new payloads are encrypted with. */
  get keyId(): string {
    return this.encryptKey.id;
  }

  /** Each payload encrypted with the first key, marked with its id (`binary/encrypted`). */
  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => this.encrypt(payload));
  }

  /** Each encrypted payload decrypted with the key it names; a payload that is not encrypted, unchanged. */
  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => this.decrypt(payload));
  }

  private encrypt(payload: Payload): Payload {
    const { id, bytes } = this.encryptKey;
    const plain = temporal.api.common.v1.Payload.encode(payload).finish();
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM, bytes, iv);
    cipher.setAAD(Buffer.from(id, 'utf8'));
    const body = Buffer.concat([cipher.update(plain), cipher.final()]);
    return {
      metadata: { encoding: Buffer.from(ENCRYPTED_ENCODING), [KEY_ID_METADATA]: Buffer.from(id) },
      data: Buffer.concat([iv, body, cipher.getAuthTag()]),
    };
  }

  private decrypt(payload: Payload): Payload {
    const encoding = payload.metadata?.encoding;
    if (!encoding || Buffer.from(encoding).toString('utf8') !== ENCRYPTED_ENCODING) return payload;
    const rawId = payload.metadata?.[KEY_ID_METADATA];
    if (!rawId) throw new CodecDecryptError(`encrypted payload has no ${KEY_ID_METADATA} metadata: it was not written by this codec`);
    const id = Buffer.from(rawId).toString('utf8');
    const key = this.keys.get(id);
    if (!key) {
      throw new CodecDecryptError(
        `payload encrypted with key "${id}", which is not configured (known: ${[...this.keys.keys()].join(', ')}); ` +
          `keep retired keys listed after the current one in ${CODEC_KEYS_ENV} until no history needs them`,
      );
    }
    const data = Buffer.from(payload.data ?? new Uint8Array());
    if (data.length < IV_BYTES + TAG_BYTES) throw new CodecDecryptError(`encrypted payload (key "${id}") is truncated: ${data.length} bytes`);
    try {
      const decipher = createDecipheriv(ALGORITHM, key, data.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(id, 'utf8'));
      decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
      const plain = Buffer.concat([decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)), decipher.final()]);
      return temporal.api.common.v1.Payload.decode(plain);
    } catch (err) {
      throw new CodecDecryptError(
        `cannot decrypt payload with key "${id}": authentication failed (the key configured under this id is not the one that encrypted it, or the payload was altered)`,
        { cause: err },
      );
    }
  }
}
