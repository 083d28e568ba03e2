/**
 * The Azure Blob Storage backend of the emulator (Azurite): shared-key calls for the service's own jobs, SAS
 * connection strings for clients, as the real service hands them out in `absUploadParams.absCredentials` and a
 * file detail's `absCredentials`.
 */
import { type Readable } from 'node:stream';
import {
  BlobSASPermissions,
  BlobServiceClient,
  ContainerSASPermissions,
  generateBlobSASQueryParameters,
  StorageSharedKeyCredential,
  type ContainerClient,
} from '@azure/storage-blob';
import { type EmulatorAbsOptions } from './options';
import { type CredentialsAccess, type ObjectStore } from './object-store';
import { formatExpiration } from './time';

/** Block size of the emulator's own uploads (importer, exports): 8 MiB × 4 in flight, like its S3 uploads. */
const UPLOAD_BLOCK_SIZE = 8 * 1024 * 1024;
const UPLOAD_CONCURRENCY = 4;

/** Host suffix of blob URLs in manifests, as the real service writes them (and the official clients parse them). */
const BLOB_HOST_SUFFIX = 'blob.core.windows.net';

export class AbsObjectStore implements ObjectStore {
  readonly provider = 'azure' as const;
  readonly bucket: string;
  readonly region = undefined;
  private readonly credential: StorageSharedKeyCredential;
  private readonly container: ContainerClient;
  private readonly blobEndpoint: string;
  /** What clients are told (SAS connection strings, file URLs). */
  private readonly publicBlobEndpoint: string;

  constructor(
    private readonly options: EmulatorAbsOptions,
    private readonly credentialsTtlSeconds: number,
    private readonly presignTtlSeconds: number,
  ) {
    this.bucket = options.container;
    this.blobEndpoint = options.blobEndpoint.replace(/\/$/, '');
    this.publicBlobEndpoint = (options.publicBlobEndpoint ?? options.blobEndpoint).replace(/\/$/, '');
    this.credential = new StorageSharedKeyCredential(options.accountName, options.accountKey);
    this.container = new BlobServiceClient(this.blobEndpoint, this.credential).getContainerClient(options.container);
  }

  async ensureBucket(): Promise<void> {
    try {
      await this.container.createIfNotExists();
    } catch (error) {
      throw new Error(`cannot create container [endpoint=${this.blobEndpoint}, container=${this.bucket}]: ${(error as Error).message}`, { cause: error });
    }
  }

  /**
   * A SAS for one blob, or for the whole container when `prefix` (Azure scopes a SAS to a blob or a container, not
   * to a name prefix, so a sliced file's credentials reach the container). Upload of one blob: read, add, create,
   * write (read lets an interrupted upload list the blocks it already staged); upload of a sliced file: add, create,
   * write only, so that its container-wide SAS reads no other file (its slices then resume from the heartbeat);
   * read: read.
   */
  private sas(key: string, access: CredentialsAccess, prefix: boolean, expiresOn: Date): string {
    const permissions = access === 'read' ? 'r' : prefix ? 'acw' : 'racw';
    return generateBlobSASQueryParameters(
      {
        containerName: this.bucket,
        ...(prefix ? {} : { blobName: key }),
        permissions: prefix ? ContainerSASPermissions.parse(permissions) : BlobSASPermissions.parse(permissions),
        startsOn: new Date(Date.now() - 5 * 60 * 1000),
        expiresOn,
      },
      this.credential,
    ).toString();
  }

  /** `absCredentials` as the service answers them: a SAS connection string and its expiry. */
  private credentials(
    key: string,
    access: CredentialsAccess,
    prefix: boolean,
    claimedTtlSeconds?: number,
  ): { SASConnectionString: string; expiration: string } {
    const expiresOn = new Date(Date.now() + this.credentialsTtlSeconds * 1000);
    const sas = this.sas(key, access, prefix, expiresOn);
    const claimed = claimedTtlSeconds === undefined ? expiresOn : new Date(Date.now() + claimedTtlSeconds * 1000);
    return { SASConnectionString: `BlobEndpoint=${this.publicBlobEndpoint};SharedAccessSignature=${sas}`, expiration: formatExpiration(claimed) };
  }

  async uploadFields(key: string, prefix: boolean, _encrypted: boolean, claimedTtlSeconds?: number): Promise<Record<string, unknown>> {
    // Azure encrypts every blob at rest: `isEncrypted` needs no per-request header there.
    return {
      absUploadParams: {
        blobName: key,
        accountName: this.options.accountName,
        protocol: new URL(this.publicBlobEndpoint).protocol.replace(':', ''),
        container: this.bucket,
        absCredentials: this.credentials(key, 'upload', prefix, claimedTtlSeconds),
      },
    };
  }

  async readFields(key: string, prefix: boolean, claimedTtlSeconds?: number): Promise<Record<string, unknown>> {
    return { absPath: { container: this.bucket, name: key }, absCredentials: this.credentials(key, 'read', prefix, claimedTtlSeconds) };
  }

  entryUrl(key: string): string {
    return `azure://${this.options.accountName}.${BLOB_HOST_SUFFIX}/${this.bucket}/${key}`;
  }

  keyOfEntryUrl(url: string): string | undefined {
    const m = /^(?:azure|https):\/\/([^./]+)\.blob\.core\.windows\.net\/([^/]+)\/(.+)$/.exec(url);
    return m && m[1] === this.options.accountName && m[2] === this.bucket ? m[3] : undefined;
  }

  presign(key: string): string {
    const sas = this.sas(key, 'read', false, new Date(Date.now() + this.presignTtlSeconds * 1000));
    const path = key.split('/').map(encodeURIComponent).join('/');
    return `${this.publicBlobEndpoint}/${encodeURIComponent(this.bucket)}/${path}?${sas}`;
  }

  async size(key: string): Promise<number | undefined> {
    try {
      return (await this.container.getBlobClient(key).getProperties()).contentLength ?? 0;
    } catch (error) {
      if ((error as { statusCode?: number }).statusCode === 404) return undefined;
      throw error;
    }
  }

  async get(key: string): Promise<Readable> {
    const response = await this.container.getBlobClient(key).download();
    if (!response.readableStreamBody) throw new Error(`blob has no body [container=${this.bucket}, blob=${key}]`);
    return response.readableStreamBody as Readable;
  }

  async getText(key: string): Promise<string> {
    const chunks: Buffer[] = [];
    for await (const chunk of await this.get(key)) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  }

  async put(key: string, body: Readable | Buffer | string, contentType = 'application/octet-stream'): Promise<void> {
    const blob = this.container.getBlockBlobClient(key);
    const blobHTTPHeaders = { blobContentType: contentType };
    if (typeof body === 'string' || Buffer.isBuffer(body)) {
      const data = typeof body === 'string' ? Buffer.from(body) : body;
      await blob.upload(data, data.length, { blobHTTPHeaders });
    } else {
      await blob.uploadStream(body, UPLOAD_BLOCK_SIZE, UPLOAD_CONCURRENCY, { blobHTTPHeaders });
    }
  }

  async delete(key: string, prefix: boolean): Promise<void> {
    const names = [key];
    if (prefix) for await (const blob of this.container.listBlobsFlat({ prefix: key })) if (blob.name !== key) names.push(blob.name);
    for (const name of names) await this.container.getBlobClient(name).deleteIfExists();
  }

  destroy(): void {
    // the SDK's HTTP client keeps no sockets we must close
  }
}
