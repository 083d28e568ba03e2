/** Realistic payloads of the real service (spec: storage-api.md, interface.md). */
export const credentials = {
  AccessKeyId: 'ASIAEXAMPLE',
  SecretAccessKey: 'secret',
  SessionToken: 'token',
  Expiration: '2025-01-01T12:00:00+00:00',
};

export const preparedSample = {
  id: 192726698,
  created: '2017-02-14T10:34:45+0100',
  isPublic: false,
  isSliced: false,
  isEncrypted: true,
  name: 'data.csv',
  url: 'https://bucket.s3.amazonaws.com/exp-15/data.csv?X-Amz-Signature=abc&X-Amz-Expires=3600',
  region: 'us-east-1',
  sizeBytes: 1024,
  tags: [],
  maxAgeDays: 15,
  runId: null,
  runIds: [],
  creatorToken: { id: 123, description: 'me@example.com' },
  provider: 'aws',
  fileType: 'csv',
  uploadParams: { key: 'exp-15/files/2017/02/14/192726698.data.csv', bucket: 'kbc-sapi-files', acl: 'private', credentials },
};
