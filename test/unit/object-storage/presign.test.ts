import { S3Client } from '@aws-sdk/client-s3';
import { encodeS3Key, presignGetObject } from '../../../src/object-storage/s3-client';

// A presigned GET's path: the keys of a bucket after the first reuse the request the SDK built for it, with their key
// encoded by encodeS3Key; each must be the path the SDK builds for that key itself (a client of its own).
const KEYS = ['exports/slices/part0001.csv', 'a b/c+d=e&f', "odd!'()*~._-/x", 'ünï/çødé/€.csv', 'double//slash', 'percent%41/#hash?q', 'trailing/'];

const client = (forcePathStyle: boolean) =>
  new S3Client({
    region: 'eu-central-1',
    endpoint: forcePathStyle ? 'http://127.0.0.1:9000' : undefined,
    forcePathStyle,
    credentials: { accessKeyId: 'AKID', secretAccessKey: 'secret', sessionToken: 'token' },
  });

describe.each([
  ['path-style (MinIO)', true],
  ['virtual-hosted (AWS)', false],
])('presignGetObject, %s', (_, pathStyle) => {
  test('every key of a bucket gets the path and host the SDK builds for it alone, and a signed query', async () => {
    const shared = client(pathStyle);
    await presignGetObject(shared, 'kbc-bucket', 'first/key.csv', 3600); // the bucket's template comes from this key
    for (const key of KEYS) {
      const reused = new URL(await presignGetObject(shared, 'kbc-bucket', key, 3600));
      const alone = new URL(await presignGetObject(client(pathStyle), 'kbc-bucket', key, 3600));
      expect(`${reused.host}${reused.pathname}`).toBe(`${alone.host}${alone.pathname}`);
      expect(reused.pathname.endsWith(encodeS3Key(key))).toBe(true);
      expect(Object.fromEntries([...reused.searchParams].filter(([k]) => k !== 'X-Amz-Signature' && k !== 'X-Amz-Date'))).toEqual(
        Object.fromEntries([...alone.searchParams].filter(([k]) => k !== 'X-Amz-Signature' && k !== 'X-Amz-Date')),
      );
      expect(reused.searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
      expect(reused.searchParams.get('X-Amz-Security-Token')).toBe('token');
    }
  });
});
