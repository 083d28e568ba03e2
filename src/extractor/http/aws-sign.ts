/**
 * AWS Signature Version 4 for extractor requests (`parameters.aws.signature.credentials`), with the AWS SDK's own
 * signer (`@smithy/signature-v4`), as the reference signs every request with the PHP SDK's `SignatureV4`.
 * NOT workflow-safe (node:crypto): used by the page fetcher only, with the secret key already resolved.
 */
import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsSignatureConfig } from '../types';

type SourceData = string | ArrayBuffer | ArrayBufferView;

const bytesOf = (data: SourceData): Buffer =>
  typeof data === 'string'
    ? Buffer.from(data, 'utf8')
    : ArrayBuffer.isView(data)
      ? Buffer.from(data.buffer, data.byteOffset, data.byteLength)
      : Buffer.from(data);

/** SHA-256 (or HMAC-SHA-256 with a secret) in the SDK's `Checksum` shape, over node:crypto. */
class NodeSha256 {
  private hash: Hash | Hmac;
  constructor(private readonly secret?: SourceData) {
    this.hash = this.fresh();
  }
  private fresh(): Hash | Hmac {
    return this.secret === undefined ? createHash('sha256') : createHmac('sha256', bytesOf(this.secret));
  }
  update(data: SourceData): void {
    this.hash.update(bytesOf(data));
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(this.hash.digest()));
  }
  reset(): void {
    this.hash = this.fresh();
  }
}

/** What is signed: the request as it will be sent. */
interface SignableRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
}

/**
 * The request's headers with the SigV4 ones added (`authorization`, `x-amz-date`, `x-amz-content-sha256`, `host`).
 * `credentials.secretKey` must be the resolved value (never a `${env:…}` reference).
 */
export async function signAwsRequest(request: SignableRequest, credentials: AwsSignatureConfig, now: Date = new Date()): Promise<Record<string, string>> {
  const url = new URL(request.url);
  const query: Record<string, string | string[]> = {};
  for (const [key, value] of url.searchParams) {
    const had = query[key];
    query[key] = had === undefined ? value : Array.isArray(had) ? [...had, value] : [had, value];
  }
  const signer = new SignatureV4({
    service: credentials.serviceName,
    region: credentials.regionName,
    credentials: { accessKeyId: credentials.accessKeyId, secretAccessKey: credentials.secretKey },
    sha256: NodeSha256,
  });
  const signed = await signer.sign(
    {
      method: request.method,
      protocol: url.protocol,
      hostname: url.hostname,
      port: url.port === '' ? undefined : Number(url.port),
      path: url.pathname,
      query,
      headers: { ...request.headers, host: url.host },
      body: request.body,
    },
    { signingDate: now },
  );
  return signed.headers as Record<string, string>;
}
