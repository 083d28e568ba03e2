import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { codecDataConverter, CodecDecryptError, EncryptionCodec, loadCodecKeys, parseCodecKeys, type CodecKey } from '../../../src/codec';
import { codecKeysEnv } from '../../../src/codec/keys';
import { loadSettings } from '../../../src/config';
import { cliSettings } from '../../../src/cli/common';
import { failureConverter } from '../../../src/codec/failure-converter';

const keyA: CodecKey = { id: 'a', key: randomBytes(32).toString('base64') };
const keyB: CodecKey = { id: 'b', key: randomBytes(32).toString('base64') };
const input = { source: '/data/customers.csv', bucketId: 'in.c-private', headers: { Authorization: 'Bearer s3cr3t' } };
const text = (payload: Payload) => `${Buffer.from(payload.data ?? []).toString('utf8')} ${JSON.stringify(payload.metadata)}`;

describe('payload encryption codec', () => {
  it('round-trips a payload, keeping its original encoding, and hides its content', async () => {
    const codec = new EncryptionCodec([keyA]);
    const plain = defaultPayloadConverter.toPayload(input);
    const [encrypted] = await codec.encode([plain]);
    expect(Buffer.from(encrypted!.metadata!.encoding!).toString()).toBe('binary/encrypted');
    expect(Buffer.from(encrypted!.metadata!['encryption-key-id']!).toString()).toBe('a');
    expect(text(encrypted!)).not.toMatch(/customers|in\.c-private|s3cr3t|json\/plain/);
    const [decoded] = await codec.decode([encrypted!]);
    expect(Buffer.from(decoded!.metadata!.encoding!).toString()).toBe('json/plain');
    expect(defaultPayloadConverter.fromPayload(decoded!)).toEqual(input);
  });

  it('encrypts the same value differently each time (fresh IV)', async () => {
    const codec = new EncryptionCodec([keyA]);
    const [one, two] = await codec.encode([defaultPayloadConverter.toPayload(input), defaultPayloadConverter.toPayload(input)]);
    expect(Buffer.from(one!.data!).equals(Buffer.from(two!.data!))).toBe(false);
  });

  it('still decrypts payloads of the old key after a rotation puts a new key first, and encrypts with the new one', async () => {
    const [old] = await new EncryptionCodec([keyA]).encode([defaultPayloadConverter.toPayload(input)]);
    const rotated = new EncryptionCodec([keyB, keyA]);
    expect(defaultPayloadConverter.fromPayload((await rotated.decode([old!]))[0]!)).toEqual(input);
    const [fresh] = await rotated.encode([defaultPayloadConverter.toPayload(input)]);
    expect(Buffer.from(fresh!.metadata!['encryption-key-id']!).toString()).toBe('b');
  });

  it('fails clearly on a payload whose key is no longer listed', async () => {
    const [old] = await new EncryptionCodec([keyA]).encode([defaultPayloadConverter.toPayload(input)]);
    await expect(new EncryptionCodec([keyB]).decode([old!])).rejects.toThrow(/payload encrypted with key "a", which is not configured \(known: b\)/);
  });

  it('fails clearly when the key under the same id is a different key, or the payload was altered', async () => {
    const [encrypted] = await new EncryptionCodec([keyA]).encode([defaultPayloadConverter.toPayload(input)]);
    const impostor = new EncryptionCodec([{ id: 'a', key: keyB.key }]);
    await expect(impostor.decode([encrypted!])).rejects.toThrow(CodecDecryptError);
    await expect(impostor.decode([encrypted!])).rejects.toThrow(/cannot decrypt payload with key "a": authentication failed/);
    const data = Buffer.from(encrypted!.data!);
    data[20] = data[20]! ^ 1;
    await expect(new EncryptionCodec([keyA]).decode([{ ...encrypted!, data }])).rejects.toThrow(/authentication failed/);
  });

  it('passes unencrypted payloads through decode (history from before the codec was on)', async () => {
    const plain = defaultPayloadConverter.toPayload(input);
    const [decoded] = await new EncryptionCodec([keyA]).decode([plain]);
    expect(decoded).toBe(plain);
  });

  it('adds itself after existing codecs and encodes failure attributes', async () => {
    const converter = codecDataConverter([keyA], { payloadCodecs: [{ encode: async (p) => p, decode: async (p) => p }] });
    expect(converter?.payloadCodecs).toHaveLength(2);
    expect(converter?.payloadCodecs?.[1]).toBeInstanceOf(EncryptionCodec);
    const loaded = (await import(converter!.failureConverterPath!)) as { failureConverter: typeof failureConverter };
    expect(loaded.failureConverter).toBe(failureConverter);
    expect(failureConverter.options.encodeCommonAttributes).toBe(true);
    expect(codecDataConverter(undefined)).toBeUndefined();
  });
});

describe('codec keys', () => {
  it('reads comma-separated id:base64key from SAPI_CODEC_KEYS, first one first', () => {
    expect(loadCodecKeys({ SAPI_CODEC_KEYS: ` b:${keyB.key} , a:${keyA.key}` })).toEqual([keyB, keyA]);
  });

  it('reads one key per line from SAPI_CODEC_KEY_FILE, skipping blanks and comments', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'codec-keys-')), 'keys');
    writeFileSync(file, `# current\nb:${keyB.key}\n\n# retired 2025-01\na:${keyA.key}\n`);
    expect(loadCodecKeys({ SAPI_CODEC_KEY_FILE: file })).toEqual([keyB, keyA]);
  });

  it('is off (undefined) when neither variable is set', () => {
    expect(loadCodecKeys({})).toBeUndefined();
    expect(loadSettings({}).codecKeys).toBeUndefined();
    expect(cliSettings({}).codecKeys).toBeUndefined();
  });

  it('is in the worker and CLI settings when configured', () => {
    expect(loadSettings({ SAPI_CODEC_KEYS: `a:${keyA.key}` }).codecKeys).toEqual([keyA]);
    expect(cliSettings({ SAPI_CODEC_KEYS: `a:${keyA.key}` }).codecKeys).toEqual([keyA]);
  });

  it('hands on the variable that configured the keys (the dev stack writes it to its env file): inline keys as given, a key file as an absolute path', () => {
    expect(codecKeysEnv({ SAPI_CODEC_KEYS: `a:${keyA.key}` })).toEqual({ SAPI_CODEC_KEYS: `a:${keyA.key}` });
    expect(codecKeysEnv({ SAPI_CODEC_KEY_FILE: 'secrets/keys' })).toEqual({ SAPI_CODEC_KEY_FILE: join(process.cwd(), 'secrets', 'keys') });
    expect(codecKeysEnv({ SAPI_CODEC_KEYS: ' ' })).toEqual({});
  });

  it('rejects malformed keys with the variable, the entry and how to fix it', () => {
    expect(() => parseCodecKeys(['nokey'], 'SAPI_CODEC_KEYS')).toThrow(/SAPI_CODEC_KEYS entry 1 must be id:base64key/);
    expect(() => parseCodecKeys([`a:${randomBytes(16).toString('base64')}`], 'SAPI_CODEC_KEYS')).toThrow(
      /key "a"\): the key must be 32 bytes in base64, got 16 bytes; generate one with `openssl rand -base64 32`/,
    );
    expect(() => parseCodecKeys([`a:${keyA.key}`, `a:${keyB.key}`], 'SAPI_CODEC_KEYS')).toThrow(/key id "a" is listed twice/);
    expect(() => loadCodecKeys({ SAPI_CODEC_KEYS: `a:${keyA.key}`, SAPI_CODEC_KEY_FILE: '/x' })).toThrow(/either SAPI_CODEC_KEYS or SAPI_CODEC_KEY_FILE/);
    expect(() => loadCodecKeys({ SAPI_CODEC_KEY_FILE: '/nonexistent/keys' })).toThrow(/SAPI_CODEC_KEY_FILE=\/nonexistent\/keys cannot be read/);
    expect(() => loadSettings({ SAPI_CODEC_KEYS: 'a:short' })).toThrow(/^invalid configuration: SAPI_CODEC_KEYS entry 1 \(key "a"\)/);
  });
});
