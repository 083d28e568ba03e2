/** Storage API calls on files: prepare (a direct upload's credentials), read, list, delete, and the importer's upload. */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { type Readable } from 'node:stream';
import { SapiInvalidInputError } from '../errors';
import { type CallContext, type CallOptions, compact, type MarkedCallOptions, requireId, requireNonEmpty } from './calls';
import { encodeMultipart } from './multipart';
import { emptySchema, fileListSchema, fileSchema, preparedFileSchema, type PreparedFile, type StorageFile } from './schemas';

export interface PrepareFileInput extends MarkedCallOptions {
  name: string;
  sizeBytes?: number;
  tags?: readonly string[];
  isSliced?: boolean;
  isEncrypted?: boolean;
  isPermanent?: boolean;
  isPublic?: boolean;
  notify?: boolean;
  /** Always true: we upload with temporary credentials. Kept in the type for symmetry with the service. */
  federationToken?: true;
}

export interface GetFileInput extends CallOptions {
  fileId: number;
  /** Ask for `s3Path` and read `credentials`. Default false. */
  federationToken?: boolean;
}

export interface ListFilesInput extends CallOptions {
  limit?: number;
  offset?: number;
  tags?: readonly string[];
  sinceId?: number;
  maxId?: number;
  q?: string;
  /** Only files created with this run id (the service's `runId` filter; also checked on our side). */
  runId?: string;
}

export interface UploadViaImporterInput extends MarkedCallOptions {
  /** File name stored in Storage. Default: the base name of `path`. */
  name?: string;
  /** Local file to send. Re-opened on every attempt, so provably-unsent attempts can be retried. */
  path?: string;
  /** A stream to send instead of `path`. Sent once: a stream cannot be replayed. */
  stream?: Readable;
  /** Size of `stream`, for `content-length`. Read from the disk for `path`. */
  sizeBytes?: number;
  tags?: readonly string[];
  isPermanent?: boolean;
  notify?: boolean;
}

export interface FileCalls {
  /** `POST files/prepare` with `federationToken`: a file resource with `uploadParams` and credentials. Not replayed. */
  prepareFile(input: PrepareFileInput): Promise<PreparedFile>;
  /** `GET files/{id}` (with `federationToken=1`: `s3Path` + read credentials). */
  getFile(input: GetFileInput): Promise<StorageFile>;
  /** `GET files`. */
  listFiles(input?: ListFilesInput): Promise<StorageFile[]>;
  /** `DELETE files/{id}`. */
  deleteFile(input: { fileId: number } & CallOptions): Promise<void>;
  /** `POST {importUrl}/upload-file`, multipart field `data`, streamed. Not replayed once it may have been sent. */
  uploadViaImporter(input: UploadViaImporterInput): Promise<StorageFile>;
}

/** Largest file the importer accepts: 2 GB. Bigger files go through a direct (multipart) upload. */
export const IMPORTER_MAX_BYTES = 2 * 1024 * 1024 * 1024;

/** The file calls; `getImportUrl` gives the importer's base URL (the client's option or its discovery). */
export function fileCalls(ctx: CallContext, getImportUrl: (input: CallOptions) => Promise<string>): FileCalls {
  const { http, scoped, branchId } = ctx;
  return {
    async prepareFile(input) {
      requireNonEmpty('prepareFile', 'name', input.name);
      const res = await http.request({
        method: 'POST',
        path: scoped('files/prepare'),
        json: compact({
          name: input.name,
          sizeBytes: input.sizeBytes,
          tags: input.tags,
          isSliced: input.isSliced,
          isEncrypted: input.isEncrypted,
          isPermanent: input.isPermanent,
          isPublic: input.isPublic,
          notify: input.notify,
          federationToken: true,
        }),
        schema: preparedFileSchema,
        idempotent: false,
        runId: input.runId,
        signal: input.signal,
      });
      return res.data;
    },

    async getFile(input) {
      requireId('getFile', 'fileId', input.fileId);
      const res = await http.request({
        method: 'GET',
        path: scoped(`files/${input.fileId}`),
        query: { federationToken: input.federationToken ? 1 : undefined },
        schema: fileSchema,
        signal: input.signal,
      });
      return res.data;
    },

    async listFiles(input = {}) {
      const res = await http.request({
        method: 'GET',
        path: scoped('files'),
        query: { limit: input.limit, offset: input.offset, tags: input.tags, sinceId: input.sinceId, maxId: input.maxId, q: input.q, runId: input.runId },
        schema: fileListSchema,
        signal: input.signal,
      });
      return input.runId === undefined ? res.data : res.data.filter((file) => file.runId === input.runId);
    },

    async deleteFile(input) {
      requireId('deleteFile', 'fileId', input.fileId);
      await http.request({ method: 'DELETE', path: scoped(`files/${input.fileId}`), schema: emptySchema, signal: input.signal });
    },

    async uploadViaImporter(input) {
      if ((input.path === undefined) === (input.stream === undefined)) {
        throw new SapiInvalidInputError('uploadViaImporter needs exactly one of path or stream');
      }
      const name = input.name ?? (input.path ? basename(input.path) : undefined);
      requireNonEmpty('uploadViaImporter', 'name', name);
      let size = input.sizeBytes;
      if (input.path) {
        try {
          size = (await stat(input.path)).size;
        } catch (err) {
          throw new SapiInvalidInputError(`uploadViaImporter: cannot read ${input.path}: ${(err as Error).message}`);
        }
      }
      if (size !== undefined && size > IMPORTER_MAX_BYTES) {
        throw new SapiInvalidInputError(
          `uploadViaImporter: ${name} has ${size} bytes, the importer accepts at most ${IMPORTER_MAX_BYTES}; use a direct upload (prepare + multipart)`,
        );
      }
      const base = await getImportUrl(input);
      const fields = {
        name,
        tags: input.tags,
        isPermanent: input.isPermanent,
        notify: input.notify,
        branchId,
      };
      let streamUsed = false;
      const res = await http.request({
        method: 'POST',
        path: `${base}/upload-file`,
        body: () => {
          let content: Readable;
          if (input.path) content = createReadStream(input.path);
          else {
            if (streamUsed) throw new SapiInvalidInputError('uploadViaImporter: a stream body cannot be sent twice; pass path to allow retries');
            streamUsed = true;
            content = input.stream as Readable;
          }
          return encodeMultipart(fields, { field: 'data', filename: name as string, size, content });
        },
        schema: fileSchema,
        idempotent: false,
        // A stream can be sent only once; a path is re-opened for each (provably unsent) retry.
        retries: input.path !== undefined,
        runId: input.runId,
        signal: input.signal,
      });
      return res.data;
    },
  };
}
