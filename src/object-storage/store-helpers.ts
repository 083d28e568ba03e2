/** What the object-store adapters share: credential expiry, error locations, manifest entries, range answers. */
import { SapiCredentialsExpiredError, SapiErrorCode, SapiTransferError } from '../errors';

/** The size of the whole object from a `Content-Range: bytes a-b/size` header. */
export function totalFromContentRange(value: string | undefined): number | undefined {
  const m = value ? /\/(\d+)\s*$/.exec(value) : null;
  return m ? Number(m[1]) : undefined;
}

/**
 * Throws `SAPI_CREDENTIALS_EXPIRED` (retryable) when credentials expiring at `expiration` (ISO 8601) expire within
 * `marginMs`; an unreadable expiration is not checked (the store will say).
 */
export function assertNotExpiring(expiration: string | undefined, where: string, marginMs: number, nowMs: number = Date.now()): void {
  if (expiration === undefined) return;
  const at = Date.parse(expiration);
  if (!Number.isNaN(at) && at - nowMs < marginMs) throw new SapiCredentialsExpiredError({ where, expiration });
}

/** The key of a parsed manifest entry; throws (not retryable) for one outside the file's bucket (`noun`: its word). */
export function keyInside(entry: { container: string; key: string }, container: string, url: string, noun = 'bucket'): string {
  if (entry.container !== container) {
    throw new SapiTransferError({
      code: SapiErrorCode.DOWNLOAD_FAILED,
      message: `manifest entry is outside the file's ${noun} ${container}`,
      context: { url },
      retryable: false,
    });
  }
  return entry.key;
}

/** `upload [bucket=b, key=k, part=3]`: where an error happened, for messages (undefined values left out). */
export function whereOf(op: string, context: Record<string, string | number | undefined>): string {
  const fields = Object.entries(context)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${v}`);
  return `${op} [${fields.join(', ')}]`;
}
