import { credentials, preparedSample } from './fixtures';
import {
  fileSchema,
  jobSchema,
  manifestSchema,
  preparedFileSchema,
  indexSchema,
  tableSchema,
  tableExportResultsSchema,
  serviceErrorSchema,
  bucketSchema,
} from '../../../src/storage-api/schemas';

describe('response schemas', () => {
  it('accept a prepare response and keep fields we do not model', () => {
    const f = preparedFileSchema.parse(preparedSample);
    expect(f.id).toBe(192726698);
    expect(f.uploadParams!.credentials.SessionToken).toBe('token');
    expect((f as Record<string, unknown>)['fileType']).toBe('csv');
  });

  it('reject a prepare response without credentials', () => {
    const { credentials: _c, ...withoutCreds } = preparedSample.uploadParams;
    expect(preparedFileSchema.safeParse({ ...preparedSample, uploadParams: withoutCreds }).success).toBe(false);
  });

  it('accept an Azure (absUploadParams) and a GCS (gcsUploadParams) prepare response, and refuse one without upload parameters, saying so', () => {
    const { uploadParams: _u, ...resource } = preparedSample;
    const absUploadParams = {
      blobName: 'exp-15/1/files/2026/01/01/1.a.csv',
      accountName: 'acct',
      container: 'files',
      absCredentials: {
        SASConnectionString: 'BlobEndpoint=https://acct.blob.core.windows.net;SharedAccessSignature=sv=x',
        expiration: '2026-01-01T12:00:00+00:00',
      },
    };
    expect(preparedFileSchema.parse({ ...resource, provider: 'azure', absUploadParams }).absUploadParams?.container).toBe('files');
    const gcsUploadParams = { bucket: 'b', key: 'k', access_token: 'ya29.x', expires_in: 3600, token_type: 'Bearer', projectId: 'p' };
    expect(preparedFileSchema.parse({ ...resource, provider: 'gcp', gcsUploadParams }).gcsUploadParams).toMatchObject({
      bucket: 'b',
      key: 'k',
      projectId: 'p',
    });
    // without its token the GCS target is of no use: refused like a response without any upload parameters
    expect(preparedFileSchema.safeParse({ ...resource, provider: 'gcp', gcsUploadParams: { bucket: 'b', key: 'k' } }).success).toBe(false);
    const none = preparedFileSchema.safeParse({ ...resource, provider: 'other' });
    expect(none.error?.issues[0]?.message).toMatch(
      /needs uploadParams \(S3\), absUploadParams \(Azure Blob Storage\) or gcsUploadParams \(Google Cloud Storage\)/,
    );
  });

  it('accept an importer response (no uploadParams) and a detail with s3Path + credentials', () => {
    const { uploadParams: _u, ...importer } = preparedSample;
    expect(fileSchema.parse(importer).uploadParams).toBeUndefined();
    const detail = fileSchema.parse({ ...importer, isSliced: true, s3Path: { bucket: 'b', key: 'exp-15/prefix/' }, credentials });
    expect(detail.s3Path).toEqual({ bucket: 'b', key: 'exp-15/prefix/' });
    expect(detail.isSliced).toBe(true);
  });

  it('default tags and isSliced, accept a null sizeBytes', () => {
    const f = fileSchema.parse({ id: '5', name: 'x.csv', sizeBytes: null });
    expect(f).toMatchObject({ id: 5, tags: [], isSliced: false, sizeBytes: null });
  });

  it('reject a file without an id', () => {
    expect(fileSchema.safeParse({ name: 'x' }).success).toBe(false);
  });

  it('parse a 202 job with the error as a string', () => {
    const job = jobSchema.parse({ id: 1, status: 'error', url: 'https://c/v2/storage/jobs/1', error: 'File not found', operationName: 'tableImport' });
    expect(job.error).toBe('File not found');
  });

  it('parse a polled job with the error as an object', () => {
    const job = jobSchema.parse({
      id: 9,
      status: 'error',
      url: 'https://c/v2/storage/jobs/9',
      tableId: 'in.c-main.t',
      operationName: 'tableImport',
      operationParams: { source: { fileId: 123 } },
      createdTime: '2025-01-01T10:00:00+0100',
      startTime: null,
      endTime: null,
      results: null,
      error: { code: 'storage.tables.validation', message: 'bad header', exceptionId: 'exc-1' },
      metrics: { inCompressed: false },
    });
    expect(job.error).toEqual({ code: 'storage.tables.validation', message: 'bad header', exceptionId: 'exc-1' });
  });

  it('parse a successful export job and its results', () => {
    const job = jobSchema.parse({ id: 3, status: 'success', url: 'u', operationName: 'tableExport', results: { file: { id: 77 }, cacheHit: false } });
    expect(tableExportResultsSchema.parse(job.results).file.id).toBe(77);
  });

  it('take a job id from its url when the id is missing', () => {
    expect(jobSchema.parse({ status: 'waiting', url: 'https://c/v2/storage/jobs/42' }).id).toBe(42);
  });

  it('reject an unknown job status', () => {
    expect(jobSchema.safeParse({ id: 1, status: 'done' }).success).toBe(false);
  });

  it('parse the index and find the importer', () => {
    const index = indexSchema.parse({ api: 'storage', version: 'v2', services: [{ id: 'import', url: 'https://import.example.com' }], components: [] });
    expect(index.services.find((s) => s.id === 'import')?.url).toBe('https://import.example.com');
  });

  it('parse a table and a bucket', () => {
    const t = tableSchema.parse({
      id: 'in.c-main.t',
      name: 't',
      columns: ['a', 'b'],
      primaryKey: [],
      rowsCount: 2,
      dataSizeBytes: 10,
      lastImportDate: null,
      bucket: { id: 'in.c-main', stage: 'in' },
    });
    expect(t.columns).toEqual(['a', 'b']);
    expect(bucketSchema.parse({ id: 'in.c-main', name: 'c-main', stage: 'in' }).id).toBe('in.c-main');
  });

  it('parse a manifest and reject non-s3 entries', () => {
    expect(manifestSchema.parse({ entries: [{ url: 's3://b/k/part_00', mandatory: true }] }).entries).toHaveLength(1);
    expect(manifestSchema.safeParse({ entries: [{ url: 'https://b/k' }] }).success).toBe(false);
  });

  it('parse main API, importer and maintenance error bodies', () => {
    expect(serviceErrorSchema.parse({ error: 'Invalid access token', code: 'storage.tokenInvalid', exceptionId: 'x' }).code).toBe('storage.tokenInvalid');
    expect(serviceErrorSchema.parse({ message: 'too big', status: 'error' }).message).toBe('too big');
    expect(serviceErrorSchema.parse({ status: 'maintenance', reason: 'upgrade', estimatedEndTime: '2025-01-01T00:00:00Z' }).status).toBe('maintenance');
  });
});
