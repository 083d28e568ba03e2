/**
 * The emulator's in-memory object store (`store: 'memory'`): files live in the emulator's own process, are served
 * to clients by the emulator itself (the presigned `url` of a file resource points at {@link MEMORY_OBJECTS_PREFIX})
 * and are gone when it closes. It answers as an `aws` stack. Clients cannot upload to it directly: there is no
 * object-storage server to hand credentials for, so `files/prepare` and `federationToken=1` are refused (501) and
 * files come in through the importer (`POST /import/upload-file`) and the emulator's own exports.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { Readable } from 'node:stream';
import { type FastifyInstance } from 'fastify';
import { ApiError } from './errors';
import { type ObjectStore } from './object-store';

/** Path prefix under which the emulator serves the memory store's objects to presigned URLs. */
export const MEMORY_OBJECTS_PREFIX = '/_objects';
/** The bucket named in file resources and manifest entry URLs (`s3://sapi-files/<key>`) of the memory store. */
export const MEMORY_STORE_BUCKET = 'sapi-files';
/** Code of the 501 answered to what needs an object-storage server (direct uploads, federation tokens). */
export const MEMORY_STORE_UNSUPPORTED = 'emulator.memoryStoreUnsupported';

interface StoredObject {
  body: Buffer;
  contentType: string;
}

/** An object that does not exist, named as S3 names it (job errors quote the name). */
function noSuchKey(key: string): Error {
  const error = new Error(`object not found in the memory store [bucket=${MEMORY_STORE_BUCKET}, key=${key}]`);
  error.name = 'NoSuchKey';
  return error;
}

async function bytesOf(body: Readable | Buffer | string): Promise<Buffer> {
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (Buffer.isBuffer(body)) return body;
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks);
}

/**
 * Objects in a map, whole: memory grows with the files held, so it is meant for tests and small data. Each
 * `put` replaces the object at once when its body has been read, as an S3 PUT does.
 */
export class MemoryObjectStore implements ObjectStore {
  readonly provider = 'aws' as const;
  readonly bucket = MEMORY_STORE_BUCKET;
  readonly region = undefined;
  private readonly objects = new Map<string, StoredObject>();
  /** Signs presigned URLs; new at every start, so no URL outlives the objects it points at. */
  private readonly secret = randomBytes(32);

  /** `baseUrl` is read at each presign: the emulator knows its URL only once it listens. */
  constructor(
    private readonly baseUrl: () => string,
    private readonly presignTtlSeconds: number,
  ) {}

  async ensureBucket(): Promise<void> {
    // nothing to create
  }

  private signature(key: string, expires: number): string {
    return createHmac('sha256', this.secret).update(`${expires}\n${key}`).digest('hex');
  }

  /** `<baseUrl>/_objects/<key>?expires=<unix s>&signature=<hmac>`, answered by the emulator until it expires. */
  presign(key: string): string {
    const expires = Math.floor(Date.now() / 1000) + this.presignTtlSeconds;
    const path = key.split('/').map(encodeURIComponent).join('/');
    return `${this.baseUrl()}${MEMORY_OBJECTS_PREFIX}/${path}?expires=${expires}&signature=${this.signature(key, expires)}`;
  }

  /**
   * The object a presigned URL names, or why not: `forbidden` for a wrong or expired signature (as S3 answers 403),
   * `missing` for a signed key with no object.
   */
  open(key: string, expires: string | undefined, signature: string | undefined): { object: StoredObject } | { refused: 'forbidden' | 'missing' } {
    const at = Number(expires);
    if (!Number.isInteger(at) || typeof signature !== 'string' || !/^[0-9a-f]{64}$/.test(signature) || at < Date.now() / 1000) return { refused: 'forbidden' };
    if (!timingSafeEqual(Buffer.from(signature, 'hex'), Buffer.from(this.signature(key, at), 'hex'))) return { refused: 'forbidden' };
    const object = this.objects.get(key);
    return object ? { object } : { refused: 'missing' };
  }

  async size(key: string): Promise<number | undefined> {
    return this.objects.get(key)?.body.length;
  }

  async get(key: string): Promise<Readable> {
    const object = this.objects.get(key);
    if (!object) throw noSuchKey(key);
    return Readable.from([object.body]);
  }

  async getText(key: string): Promise<string> {
    const object = this.objects.get(key);
    if (!object) throw noSuchKey(key);
    return object.body.toString('utf8');
  }

  async put(key: string, body: Readable | Buffer | string, contentType = 'application/octet-stream', contentLength?: number): Promise<void> {
    const bytes = await bytesOf(body);
    if (contentLength !== undefined && bytes.length !== contentLength) {
      throw new Error(`upload failed [bucket=${this.bucket}, key=${key}]: the body has ${bytes.length} bytes, ${contentLength} were announced`);
    }
    this.objects.set(key, { body: bytes, contentType });
  }

  async delete(key: string, prefix: boolean): Promise<void> {
    this.objects.delete(key);
    if (!prefix) return;
    for (const name of [...this.objects.keys()]) if (name.startsWith(key)) this.objects.delete(name);
  }

  entryUrl(key: string): string {
    return `s3://${this.bucket}/${key}`;
  }

  keyOfEntryUrl(url: string): string | undefined {
    const prefix = `s3://${this.bucket}/`;
    return url.startsWith(prefix) ? url.slice(prefix.length) : undefined;
  }

  async uploadFields(key: string): Promise<Record<string, unknown>> {
    throw new ApiError(
      501,
      MEMORY_STORE_UNSUPPORTED,
      `direct uploads need an object-storage server [key=${key}]: the emulator runs with store "memory", which takes files through the importer ` +
        '(POST /import/upload-file) only; start it with store "server" (MinIO, Azurite or fake-gcs-server) to prepare files for upload',
    );
  }

  async readFields(key: string): Promise<Record<string, unknown>> {
    throw new ApiError(
      501,
      MEMORY_STORE_UNSUPPORTED,
      `federation tokens need an object-storage server [key=${key}]: the emulator runs with store "memory"; read the file at its url, ` +
        'or start the emulator with store "server" (MinIO, Azurite or fake-gcs-server)',
    );
  }

  destroy(): void {
    this.objects.clear();
  }
}

/** S3's XML error body, as a client reading a presigned URL of an S3 stack gets it. */
function s3Error(code: string, message: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>`;
}

/** GET (and HEAD) of the memory store's objects at the presigned URLs of file resources. */
export function registerMemoryObjectRoutes(scope: FastifyInstance, store: MemoryObjectStore): void {
  scope.get('/*', async (request, reply) => {
    const key = (request.params as { '*': string })['*'];
    const { expires, signature } = request.query as { expires?: string; signature?: string };
    const found = store.open(key, expires, signature);
    if ('refused' in found) {
      const [status, code, message] =
        found.refused === 'forbidden'
          ? [403, 'AccessDenied', 'Request has expired or its signature does not match']
          : [404, 'NoSuchKey', 'The specified key does not exist.'];
      return reply.code(status).header('content-type', 'application/xml').send(s3Error(code, message));
    }
    return reply.header('content-type', found.object.contentType).header('content-length', String(found.object.body.length)).send(found.object.body);
  });
}
