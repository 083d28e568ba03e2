/**
 * An in-memory fake of the few S3 calls the transfers make (the narrow interface: `send(command)`), recording
 * every command. Failures can be scripted per command name.
 */
import { createHash } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { type S3Client } from '@aws-sdk/client-s3';

export interface SentCommand {
  name: string;
  input: Record<string, unknown>;
}

export class FakeS3 {
  readonly sent: SentCommand[] = [];
  readonly objects = new Map<string, Buffer>();
  private readonly uploads = new Map<string, Map<number, Buffer>>();
  private readonly algorithms = new Map<string, string | undefined>();
  private nextUpload = 1;
  inFlight = 0;
  maxInFlight = 0;
  /** Scripted failures: command name → errors thrown in order. */
  readonly failures = new Map<string, Error[]>();
  /** Delay of every UploadPart (ms), to observe concurrency. */
  partDelayMs = 0;
  /** Override the ETag returned for a part. */
  etagFor?: (partNumber: number, md5hex: string) => string;
  /** Override the CRC32 echoed for a part. */
  crcFor?: (partNumber: number, crc: string) => string;

  asClient(): S3Client {
    return this as unknown as S3Client;
  }

  fail(name: string, ...errors: Error[]): void {
    this.failures.set(name, [...(this.failures.get(name) ?? []), ...errors]);
  }

  count(name: string): number {
    return this.sent.filter((c) => c.name === name).length;
  }

  destroy(): void {}

  async send(command: { constructor: { name: string }; input: Record<string, unknown> }): Promise<Record<string, unknown>> {
    const name = command.constructor.name;
    const input = command.input;
    this.sent.push({ name, input });
    const scripted = this.failures.get(name);
    if (scripted?.length) throw scripted.shift();
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      return await this.handle(name, input);
    } finally {
      this.inFlight--;
    }
  }

  private async handle(name: string, input: Record<string, unknown>): Promise<Record<string, unknown>> {
    const key = `${input['Bucket']}/${input['Key']}`;
    switch (name) {
      case 'PutObjectCommand': {
        const body = input['Body'] as Buffer;
        const crc = checkSum(body, input);
        this.objects.set(key, Buffer.from(body));
        return { ETag: `"${md5hex(body)}"`, ...(crc ? { ChecksumCRC32: crc } : {}) };
      }
      case 'CreateMultipartUploadCommand': {
        const id = `upload-${this.nextUpload++}`;
        this.uploads.set(id, new Map());
        this.algorithms.set(id, input['ChecksumAlgorithm'] as string | undefined);
        return { UploadId: id };
      }
      case 'UploadPartCommand': {
        if (this.partDelayMs) await new Promise((r) => setTimeout(r, this.partDelayMs));
        const parts = this.uploads.get(input['UploadId'] as string);
        if (!parts) throw s3Error('NoSuchUpload', 404);
        const body = input['Body'] as Buffer;
        const crc = checkSum(body, input);
        if (this.algorithms.get(input['UploadId'] as string) === 'CRC32' && !crc) throw s3Error('InvalidRequest', 400);
        parts.set(input['PartNumber'] as number, Buffer.from(body));
        const hex = md5hex(body);
        return {
          ETag: `"${this.etagFor ? this.etagFor(input['PartNumber'] as number, hex) : hex}"`,
          ...(crc ? { ChecksumCRC32: this.crcFor ? this.crcFor(input['PartNumber'] as number, crc) : crc } : {}),
        };
      }
      case 'CompleteMultipartUploadCommand': {
        const parts = this.uploads.get(input['UploadId'] as string);
        if (!parts) throw s3Error('NoSuchUpload', 404);
        const list = (input['MultipartUpload'] as { Parts: { PartNumber: number; ChecksumCRC32?: string }[] }).Parts;
        if (this.algorithms.get(input['UploadId'] as string) === 'CRC32' && list.some((p) => !p.ChecksumCRC32)) throw s3Error('InvalidPart', 400);
        this.objects.set(key, Buffer.concat(list.map((p) => parts.get(p.PartNumber)!)));
        this.uploads.delete(input['UploadId'] as string);
        return { ETag: '"complete-etag-2"' };
      }
      default:
        throw new Error(`FakeS3 does not implement ${name}`);
    }
  }
}

export function s3Error(name: string, status: number): Error {
  return Object.assign(new Error(`${name} from fake`), { name, $metadata: { httpStatusCode: status } });
}

function md5hex(b: Buffer): string {
  return createHash('md5').update(b).digest('hex');
}

/** Verifies the checksum sent with a body (CRC32 or Content-MD5, one is required); returns the CRC32 when sent. */
function checkSum(body: Buffer, input: Record<string, unknown>): string | undefined {
  if (input['ChecksumCRC32'] !== undefined) {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(crc32(body) >>> 0);
    if (input['ChecksumCRC32'] !== b.toString('base64')) throw s3Error('BadDigest', 400);
    return input['ChecksumCRC32'] as string;
  }
  if (input['ContentMD5'] !== createHash('md5').update(body).digest('base64')) throw s3Error('BadDigest', 400);
  return undefined;
}
