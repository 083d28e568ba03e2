import { type Readable } from 'node:stream';
import {
  CreateBucketCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  S3Client,
} from '@aws-sdk/client-s3';
import { AssumeRoleCommand, STSClient } from '@aws-sdk/client-sts';
import { Upload } from '@aws-sdk/lib-storage';
import { type EmulatorS3Options } from './options';
import { presignGetUrl } from './presign';
import { formatExpiration } from './time';

/** Credentials that claim to expire `claimedTtlSeconds` from now (the STS ones underneath stay valid). */
function claimExpiry(credentials: TemporaryCredentials, claimedTtlSeconds: number | undefined): TemporaryCredentials {
  return claimedTtlSeconds === undefined ? credentials : { ...credentials, Expiration: formatExpiration(new Date(Date.now() + claimedTtlSeconds * 1000)) };
}

/** Temporary credentials in the service's shape. */
export interface TemporaryCredentials {
  AccessKeyId: string;
  SecretAccessKey: string;
  SessionToken: string;
  Expiration: string;
}

export type CredentialsAccess = 'upload' | 'read';

/** Object-storage backends the emulator serves, named as the service's `provider` field names them. */
export type ObjectStoreProvider = 'aws' | 'azure' | 'gcp';

/**
 * The emulator's narrow view of one object-storage backend: the Storage API's own (root) access for its jobs, plus
 * the backend-specific fields of its answers (prepare's upload parameters, a file detail's read credentials,
 * manifest entry URLs). One implementation per backend: {@link S3ObjectStore} (MinIO), `AbsObjectStore` (Azurite),
 * `GcsObjectStore` (fake-gcs-server), and `MemoryObjectStore` (the emulator's own memory, `store: 'memory'`). Every one
 * passes the contract of `test/harness/object-store-contract.ts`.
 */
export interface ObjectStore {
  readonly provider: ObjectStoreProvider;
  /** S3 bucket or Azure container holding every file. */
  readonly bucket: string;
  /** Region reported in file resources; undefined on backends without one (Azure). */
  readonly region: string | undefined;
  ensureBucket(): Promise<void>;
  /** A time-limited GET URL of one object (the file resource's `url`). */
  presign(key: string): string;
  /** Size of an object, or undefined when it does not exist. */
  size(key: string): Promise<number | undefined>;
  get(key: string): Promise<Readable>;
  getText(key: string): Promise<string>;
  put(key: string, body: Readable | Buffer | string, contentType?: string, contentLength?: number): Promise<void>;
  /** Deletes the key and, when `prefix`, everything under it. */
  delete(key: string, prefix: boolean): Promise<void>;
  /** URL of an object in a sliced file's manifest (`s3://bucket/key`, `azure://account.blob.core.windows.net/container/key`, `gs://bucket/key`). */
  entryUrl(key: string): string;
  /** The key behind a manifest entry URL of this store, or undefined when the URL is not one of its own. */
  keyOfEntryUrl(url: string): string | undefined;
  /**
   * Prepare's backend fields for a file at `key` (a prefix when `prefix`): `{uploadParams}`, `{absUploadParams}` or `{gcsUploadParams}`.
   * `claimedTtlSeconds` overrides the expiry the credentials claim (fault injection).
   */
  uploadFields(key: string, prefix: boolean, encrypted: boolean, claimedTtlSeconds?: number): Promise<Record<string, unknown>>;
  /** A file detail's `federationToken=1` fields: `{s3Path, credentials}`, `{absPath, absCredentials}` or `{gcsPath, gcsCredentials}`. */
  readFields(key: string, prefix: boolean, claimedTtlSeconds?: number): Promise<Record<string, unknown>>;
  destroy(): void;
}

/** Part size of the emulator's own multipart uploads (importer, exports): 8 MiB × 4 in flight. */
const UPLOAD_PART_SIZE = 8 * 1024 * 1024;
const UPLOAD_QUEUE_SIZE = 4;

/** The S3 backend (MinIO): root-key S3 calls plus STS-issued, key-scoped credentials. */
export class S3ObjectStore implements ObjectStore {
  readonly provider = 'aws' as const;
  readonly bucket: string;
  readonly region: string;
  private readonly s3: S3Client;
  private readonly sts: STSClient;

  constructor(
    private readonly options: EmulatorS3Options,
    private readonly credentialsTtlSeconds: number,
    private readonly presignTtlSeconds: number,
  ) {
    this.bucket = options.bucket;
    this.region = options.region;
    const credentials = { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey };
    // no SDK-computed CRC32 on every part of the emulator's own uploads (exports): a JS checksum cost more CPU than
    // the rest of an export; the store checks nothing it is not asked to
    this.s3 = new S3Client({
      endpoint: options.endpoint,
      region: options.region,
      forcePathStyle: true,
      credentials,
      requestChecksumCalculation: 'WHEN_REQUIRED',
    });
    this.sts = new STSClient({ endpoint: options.endpoint, region: options.region, credentials });
  }

  async ensureBucket(): Promise<void> {
    try {
      await this.s3.send(new HeadBucketCommand({ Bucket: this.bucket }));
    } catch {
      try {
        await this.s3.send(new CreateBucketCommand({ Bucket: this.bucket }));
      } catch (error) {
        const name = (error as Error).name;
        if (name !== 'BucketAlreadyOwnedByYou' && name !== 'BucketAlreadyExists') {
          throw new Error(`cannot create bucket [endpoint=${this.options.endpoint}, bucket=${this.bucket}]: ${(error as Error).message}`, { cause: error });
        }
      }
    }
  }

  /**
   * STS AssumeRole with a session policy narrowed to one key, or a key prefix when `prefix` is true.
   * Upload: s3:PutObject only (covers multipart create/part/complete; MinIO has no s3:PutObjectAcl action).
   * Read: s3:GetObject (covers HeadObject).
   */
  async issueCredentials(key: string, access: CredentialsAccess, prefix: boolean): Promise<TemporaryCredentials> {
    const resource = `arn:aws:s3:::${this.bucket}/${key}${prefix ? '*' : ''}`;
    const policy = {
      Version: '2012-10-17',
      Statement: [{ Effect: 'Allow', Action: access === 'upload' ? ['s3:PutObject'] : ['s3:GetObject'], Resource: [resource] }],
    };
    const result = await this.sts.send(
      new AssumeRoleCommand({
        RoleArn: 'arn:aws:iam::000000000000:role/sapi-emulator',
        RoleSessionName: `sapi-emulator-${access}`,
        DurationSeconds: this.credentialsTtlSeconds,
        Policy: JSON.stringify(policy),
      }),
    );
    const c = result.Credentials;
    if (!c?.AccessKeyId || !c.SecretAccessKey || !c.SessionToken) {
      throw new Error(`STS AssumeRole returned no credentials [endpoint=${this.options.endpoint}, key=${key}]`);
    }
    const expiration = c.Expiration ?? new Date(Date.now() + this.credentialsTtlSeconds * 1000);
    return { AccessKeyId: c.AccessKeyId, SecretAccessKey: c.SecretAccessKey, SessionToken: c.SessionToken, Expiration: formatExpiration(expiration) };
  }

  async uploadFields(key: string, prefix: boolean, encrypted: boolean, claimedTtlSeconds?: number): Promise<Record<string, unknown>> {
    const credentials = claimExpiry(await this.issueCredentials(key, 'upload', prefix), claimedTtlSeconds);
    const uploadParams: Record<string, unknown> = { key, bucket: this.bucket, acl: 'private', credentials };
    if (encrypted) uploadParams['x-amz-server-side-encryption'] = 'AES256';
    return { uploadParams };
  }

  async readFields(key: string, prefix: boolean, claimedTtlSeconds?: number): Promise<Record<string, unknown>> {
    const credentials = claimExpiry(await this.issueCredentials(key, 'read', prefix), claimedTtlSeconds);
    return { s3Path: { bucket: this.bucket, key }, credentials };
  }

  entryUrl(key: string): string {
    return `s3://${this.bucket}/${key}`;
  }

  keyOfEntryUrl(url: string): string | undefined {
    const prefix = `s3://${this.bucket}/`;
    return url.startsWith(prefix) ? url.slice(prefix.length) : undefined;
  }

  presign(key: string): string {
    return presignGetUrl({
      endpoint: this.options.endpoint,
      region: this.region,
      accessKeyId: this.options.accessKeyId,
      secretAccessKey: this.options.secretAccessKey,
      bucket: this.bucket,
      key,
      expiresInSeconds: this.presignTtlSeconds,
    });
  }

  /** Size of an object, or undefined when it does not exist. */
  async size(key: string): Promise<number | undefined> {
    try {
      const head = await this.s3.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return head.ContentLength ?? 0;
    } catch (error) {
      const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      if (status === 404 || (error as Error).name === 'NotFound' || (error as Error).name === 'NoSuchKey') return undefined;
      throw error;
    }
  }

  async get(key: string): Promise<Readable> {
    const result = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
    return result.Body as Readable;
  }

  async getText(key: string): Promise<string> {
    const body = await this.get(key);
    const chunks: Buffer[] = [];
    for await (const chunk of body) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  }

  /**
   * Streams `body` to `key` in bounded multipart parts. Pass `contentLength` for file streams: lib-storage otherwise
   * guesses the size from a ReadStream's `start`/`end` and rejects a ranged stream.
   */
  async put(key: string, body: Readable | Buffer | string, contentType = 'application/octet-stream', contentLength?: number): Promise<void> {
    const upload = new Upload({
      client: this.s3,
      params: { Bucket: this.bucket, Key: key, Body: body, ContentType: contentType, ...(contentLength === undefined ? {} : { ContentLength: contentLength }) },
      partSize: UPLOAD_PART_SIZE,
      queueSize: UPLOAD_QUEUE_SIZE,
      leavePartsOnError: false,
    });
    await upload.done();
  }

  /** Deletes the key and, when `prefix`, everything under it. */
  async delete(key: string, prefix: boolean): Promise<void> {
    const keys: string[] = [key];
    if (prefix) {
      let token: string | undefined;
      do {
        const page = await this.s3.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: key, ContinuationToken: token }));
        for (const o of page.Contents ?? []) if (o.Key && o.Key !== key) keys.push(o.Key);
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
    }
    for (let i = 0; i < keys.length; i += 1000) {
      await this.s3.send(new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: keys.slice(i, i + 1000).map((Key) => ({ Key })), Quiet: true } }));
    }
  }

  destroy(): void {
    this.s3.destroy();
    this.sts.destroy();
  }
}
