import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { AssumeRoleCommand, STSClient } from '@aws-sdk/client-sts';
import { testStack } from '../../harness/stack-state';

describe('MinIO STS scoped credentials (what the emulator hands out as uploadParams.credentials)', () => {
  const { minio } = testStack();
  const bucket = `sts-${Date.now().toString(36)}`;
  const allowedKey = 'exp-15/files/1.allowed.csv';
  const otherKey = 'exp-15/files/2.other.csv';
  const rootS3 = new S3Client({
    endpoint: minio.endpoint,
    region: minio.region,
    forcePathStyle: true,
    credentials: { accessKeyId: minio.accessKeyId, secretAccessKey: minio.secretAccessKey },
  });

  let scoped: S3Client;
  let expiration: Date | undefined;
  beforeAll(async () => {
    await rootS3.send(new CreateBucketCommand({ Bucket: bucket }));
    await rootS3.send(new PutObjectCommand({ Bucket: bucket, Key: otherKey, Body: 'secret,data\n' }));
    const sts = new STSClient({
      endpoint: minio.endpoint,
      region: minio.region,
      credentials: { accessKeyId: minio.accessKeyId, secretAccessKey: minio.secretAccessKey },
    });
    const { Credentials } = await sts.send(
      new AssumeRoleCommand({
        RoleArn: 'arn:xxx:xxx:xxx:xxxx',
        RoleSessionName: 'upload',
        DurationSeconds: 900,
        Policy: JSON.stringify({
          Version: '2012-10-17',
          Statement: [{ Effect: 'Allow', Action: ['s3:PutObject'], Resource: [`arn:aws:s3:::${bucket}/${allowedKey}`] }],
        }),
      }),
    );
    expiration = Credentials?.Expiration;
    scoped = new S3Client({
      endpoint: minio.endpoint,
      region: minio.region,
      forcePathStyle: true,
      credentials: {
        accessKeyId: Credentials!.AccessKeyId!,
        secretAccessKey: Credentials!.SecretAccessKey!,
        sessionToken: Credentials!.SessionToken!,
      },
    });
  });

  it('issues temporary credentials with a session token and an expiration about 15 minutes out', () => {
    expect(expiration).toBeInstanceOf(Date);
    const minutes = (expiration!.getTime() - Date.now()) / 60_000;
    expect(minutes).toBeGreaterThan(13);
    expect(minutes).toBeLessThan(16);
  });

  it('lets the credentials put the one allowed key', async () => {
    await scoped.send(new PutObjectCommand({ Bucket: bucket, Key: allowedKey, Body: 'a,b\n1,2\n' }));
    const stored = await rootS3.send(new GetObjectCommand({ Bucket: bucket, Key: allowedKey }));
    expect(await stored.Body!.transformToString()).toBe('a,b\n1,2\n');
  });

  it('denies writing any other key and reading anything', async () => {
    await expect(scoped.send(new PutObjectCommand({ Bucket: bucket, Key: otherKey, Body: 'overwritten' }))).rejects.toMatchObject({ name: 'AccessDenied' });
    await expect(scoped.send(new GetObjectCommand({ Bucket: bucket, Key: otherKey }))).rejects.toMatchObject({ name: 'AccessDenied' });
    await expect(scoped.send(new GetObjectCommand({ Bucket: bucket, Key: allowedKey }))).rejects.toMatchObject({ name: 'AccessDenied' });
    const untouched = await rootS3.send(new GetObjectCommand({ Bucket: bucket, Key: otherKey }));
    expect(await untouched.Body!.transformToString()).toBe('secret,data\n');
  });
});
