import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { SapiInvalidInputError } from '../errors';

/**
 * Temporary object-storage credentials cross workflow history between `prepareFile` and `uploadFile`, so they
 * are sealed: AES-256-GCM with a key derived (HKDF-SHA256) from the connection's Storage token, which only the
 * worker knows. History holds an opaque `v1.<iv>.<ciphertext>.<tag>` string, useless without the token.
 */
export interface Sealer {
  seal(value: unknown): string;
  open<T>(sealed: string): T;
}

const VERSION = 'v1';

export function createSealer(token: string): Sealer {
  const key = Buffer.from(hkdfSync('sha256', token, 'sapi-temporal', 'sealed-credentials-v1', 32));
  return {
    seal(value) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
      return [VERSION, iv.toString('base64url'), body.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
    },
    open<T>(sealed: string): T {
      const [version, iv, body, tag] = sealed.split('.');
      if (version !== VERSION || !iv || !body || !tag) throw new SapiInvalidInputError('sealed credentials are malformed');
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
        decipher.setAuthTag(Buffer.from(tag, 'base64url'));
        const plain = Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]);
        return JSON.parse(plain.toString('utf8')) as T;
      } catch {
        throw new SapiInvalidInputError('sealed credentials cannot be opened: they were sealed for another connection or token');
      }
    },
  };
}
