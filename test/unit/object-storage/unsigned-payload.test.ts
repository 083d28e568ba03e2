import { unsignedChecksummedPayload } from '../../../src/object-storage/s3-client';

describe('unsignedChecksummedPayload', () => {
  it('marks a part that carries its CRC32 as an unsigned payload, so neither the SDK nor the store hashes it again', () => {
    const request = { headers: { 'x-amz-checksum-crc32': 'AAAAAA==', 'content-length': '3' }, body: Buffer.from('abc') };
    unsignedChecksummedPayload(request);
    expect(request.headers).toMatchObject({ 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' });
  });

  it('does the same for a body with Content-MD5', () => {
    const request = { headers: { 'Content-MD5': 'kAFQmDzST7DWlj99KOF/cg==' }, body: Buffer.from('abc') };
    unsignedChecksummedPayload(request);
    expect(request.headers).toMatchObject({ 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' });
  });

  it('leaves a body without a checksum to be hashed into the signature', () => {
    const request = { headers: { 'content-type': 'application/x-ndjson' } as Record<string, string>, body: Buffer.from('{}') };
    unsignedChecksummedPayload(request);
    expect(request.headers['x-amz-content-sha256']).toBeUndefined();
  });

  it('keeps a payload hash the request already has', () => {
    const request = { headers: { 'x-amz-checksum-crc32': 'AAAAAA==', 'X-Amz-Content-Sha256': 'abc123' } as Record<string, string>, body: Buffer.from('abc') };
    unsignedChecksummedPayload(request);
    expect(request.headers).toEqual({ 'x-amz-checksum-crc32': 'AAAAAA==', 'X-Amz-Content-Sha256': 'abc123' });
  });
});
