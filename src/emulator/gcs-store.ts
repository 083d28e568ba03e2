/**
 * The Google Cloud Storage backend of the emulator (fake-gcs-server), over its JSON API with plain HTTP. Clients get
 * what the real service hands out: `gcsUploadParams` / `gcsCredentials` with an OAuth `access_token`, `gcsPath`, and
 * `gs://` manifest entries. fake-gcs-server checks no token at all, so the emulator's tokens are opaque random
 * strings that scope nothing: on this backend a client's credentials are not enforced (the Azure backend's SAS is).
 */
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { Agent, request, type Dispatcher } from 'undici';
import { type EmulatorGcsOptions } from './options';
import { type ObjectStore } from './object-store';

/** `gcsCredentials` / the credentials inside `gcsUploadParams`, as the service answers them. */
interface GcsCredentialsFields {
  access_token: string;
  /** Seconds from issue. */
  expires_in: number;
  token_type: 'Bearer';
  projectId: string;
}

export class GcsObjectStore implements ObjectStore {
  readonly provider = 'gcp' as const;
  readonly bucket: string;
  readonly region = undefined;
  private readonly endpoint: string;
  /** What clients are told (file URLs). */
  private readonly publicEndpoint: string;
  private readonly dispatcher: Dispatcher = new Agent({ connections: 16 });

  constructor(
    private readonly options: EmulatorGcsOptions,
    private readonly credentialsTtlSeconds: number,
  ) {
    this.bucket = options.bucket;
    this.endpoint = options.endpoint.replace(/\/$/, '');
    this.publicEndpoint = (options.publicEndpoint ?? options.endpoint).replace(/\/$/, '');
  }

  private objectPath(key: string): string {
    return `/storage/v1/b/${encodeURIComponent(this.bucket)}/o/${encodeURIComponent(key)}`;
  }

  private async call(
    method: Dispatcher.HttpMethod,
    path: string,
    body?: Dispatcher.DispatchOptions['body'],
    headers: Record<string, string> = {},
  ): Promise<Dispatcher.ResponseData> {
    return request(`${this.endpoint}${path}`, { method, body, headers, dispatcher: this.dispatcher, headersTimeout: 60_000, bodyTimeout: 300_000 });
  }

  private async fail(res: Dispatcher.ResponseData, what: string): Promise<never> {
    const text = await res.body.text().catch(() => '');
    throw new Error(`${what} answered ${res.statusCode} [endpoint=${this.endpoint}, bucket=${this.bucket}]: ${text.slice(0, 300)}`);
  }

  async ensureBucket(): Promise<void> {
    const head = await this.call('GET', `/storage/v1/b/${encodeURIComponent(this.bucket)}`);
    await head.body.dump();
    if (head.statusCode === 200) return;
    const res = await this.call('POST', `/storage/v1/b?project=${encodeURIComponent(this.options.projectId)}`, JSON.stringify({ name: this.bucket }), {
      'content-type': 'application/json',
    });
    if (res.statusCode !== 200 && res.statusCode !== 409) await this.fail(res, 'cannot create bucket: bucket insert');
    await res.body.dump();
  }

  /** An opaque bearer token (fake-gcs-server accepts any) and its lifetime, in the service's field names. */
  private credentials(claimedTtlSeconds?: number): GcsCredentialsFields {
    return {
      access_token: `ya29.sapi-emulator-${randomBytes(24).toString('base64url')}`,
      expires_in: claimedTtlSeconds ?? this.credentialsTtlSeconds,
      token_type: 'Bearer',
      projectId: this.options.projectId,
    };
  }

  async uploadFields(key: string, _prefix: boolean, _encrypted: boolean, claimedTtlSeconds?: number): Promise<Record<string, unknown>> {
    // GCS encrypts every object at rest: `isEncrypted` needs no per-request field there.
    return { gcsUploadParams: { bucket: this.bucket, key, ...this.credentials(claimedTtlSeconds) } };
  }

  async readFields(key: string, _prefix: boolean, claimedTtlSeconds?: number): Promise<Record<string, unknown>> {
    return { gcsPath: { bucket: this.bucket, key }, gcsCredentials: this.credentials(claimedTtlSeconds) };
  }

  entryUrl(key: string): string {
    return `gs://${this.bucket}/${key}`;
  }

  keyOfEntryUrl(url: string): string | undefined {
    const prefix = `gs://${this.bucket}/`;
    return url.startsWith(prefix) ? url.slice(prefix.length) : undefined;
  }

  /** The object's media URL. Not signed: fake-gcs-server serves every object to anyone (the real service signs it). */
  presign(key: string): string {
    return `${this.publicEndpoint}/download/storage/v1/b/${encodeURIComponent(this.bucket)}/o/${encodeURIComponent(key)}?alt=media`;
  }

  async size(key: string): Promise<number | undefined> {
    const res = await this.call('GET', this.objectPath(key));
    if (res.statusCode === 404) {
      await res.body.dump();
      return undefined;
    }
    if (res.statusCode !== 200) await this.fail(res, `object get [key=${key}]`);
    const object = (await res.body.json()) as { size?: string };
    return Number(object.size ?? 0);
  }

  async get(key: string): Promise<Readable> {
    const res = await this.call('GET', `${this.objectPath(key)}?alt=media`);
    if (res.statusCode !== 200) await this.fail(res, `object download [key=${key}]`);
    return res.body;
  }

  async getText(key: string): Promise<string> {
    return (await this.get(key))
      .setEncoding('utf8')
      .toArray()
      .then((parts: string[]) => parts.join(''));
  }

  /** One media upload: fake-gcs-server holds an upload in memory whatever protocol carries it. */
  async put(key: string, body: Readable | Buffer | string, contentType = 'application/octet-stream', contentLength?: number): Promise<void> {
    const path = `/upload/storage/v1/b/${encodeURIComponent(this.bucket)}/o?uploadType=media&name=${encodeURIComponent(key)}`;
    const headers: Record<string, string> = { 'content-type': contentType };
    if (contentLength !== undefined) headers['content-length'] = String(contentLength);
    const res = await this.call('POST', path, typeof body === 'string' || Buffer.isBuffer(body) ? body : Readable.from(body), headers);
    if (res.statusCode !== 200) await this.fail(res, `object upload [key=${key}]`);
    await res.body.dump();
  }

  async delete(key: string, prefix: boolean): Promise<void> {
    const keys = [key];
    if (prefix) {
      let pageToken: string | undefined;
      do {
        const query = `prefix=${encodeURIComponent(key)}${pageToken ? `&pageToken=${encodeURIComponent(pageToken)}` : ''}`;
        const res = await this.call('GET', `/storage/v1/b/${encodeURIComponent(this.bucket)}/o?${query}`);
        if (res.statusCode !== 200) await this.fail(res, `object list [prefix=${key}]`);
        const page = (await res.body.json()) as { items?: { name: string }[]; nextPageToken?: string };
        for (const item of page.items ?? []) if (item.name !== key) keys.push(item.name);
        pageToken = page.nextPageToken;
      } while (pageToken);
    }
    for (const name of keys) {
      const res = await this.call('DELETE', this.objectPath(name));
      if (res.statusCode !== 204 && res.statusCode !== 200 && res.statusCode !== 404) await this.fail(res, `object delete [key=${name}]`);
      await res.body.dump();
    }
  }

  destroy(): void {
    void this.dispatcher.close();
  }
}
