import { Transform } from 'node:stream';
import { type FastifyInstance } from 'fastify';
import { type EmulatorContext } from '../context';
import { ApiError } from '../errors';
import { newFileRecord } from '../files';
import { decodePairs, parseBool, parseList, parseString } from '../form';
import { multipartFields, multipartParts, runIdOf, tokenOf, unreadableBody } from '../http';
import { type FileRecord } from '../model';
import { fileResource } from '../resources';

/** Counts bytes flowing through. */
function byteCounter(): Transform & { bytes: number } {
  const counter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      counter.bytes += chunk.length;
      done(null, chunk);
    },
  }) as Transform & { bytes: number };
  counter.bytes = 0;
  return counter;
}

/** The importer service: `POST <importUrl>/upload-file`, multipart with a `data` file part, streamed to MinIO. */
export function registerImporterRoutes(app: FastifyInstance, ctx: EmulatorContext): void {
  app.post('/upload-file', async (request) => {
    if (!request.isMultipart()) {
      throw new ApiError(400, 'importer.multipartRequired', 'the request must be multipart/form-data with the file in a part named "data"');
    }
    const token = tokenOf(request);
    const { pairs, add } = multipartFields();
    let file: FileRecord | undefined;
    for await (const part of multipartParts(request)) {
      if (part.type === 'field') {
        add(part.fieldname, part.value);
        continue;
      }
      if (part.fieldname !== 'data' || file) {
        part.file.resume();
        continue;
      }
      const early = decodePairs(pairs);
      file = newFileRecord(ctx, {
        name: parseString(early.name) ?? part.filename ?? 'upload',
        isPermanent: parseBool(early.isPermanent) ?? false,
        isSliced: false,
        isEncrypted: true,
        isPublic: parseBool(early.isPublic) ?? false,
        tags: [],
        creatorToken: { id: token.id, description: `${token.description} (file uploaded through the importer service)` },
        branchId: parseString(early.branchId) ?? 'default',
        runId: runIdOf(request),
        measured: true,
      });
      const counter = byteCounter();
      // the body's own failure (cut off mid-part): the client's fault, not the store's
      let bodyError: Error | undefined;
      part.file.on('error', (error) => {
        bodyError = error;
        counter.destroy(error);
      });
      try {
        await ctx.objects.put(file.key, part.file.pipe(counter));
      } catch (error) {
        if (part.file.truncated) {
          throw new ApiError(
            400,
            'importer.fileTooLarge',
            `file is larger than the importer's limit of ${2 * 1024 ** 3} bytes; upload it to object storage with files/prepare instead`,
          );
        }
        if (bodyError) {
          await ctx.objects.delete(file.key, false).catch(() => undefined);
          throw unreadableBody(bodyError);
        }
        throw new ApiError(500, 'importer.uploadFailed', `storing the upload failed [key=${file.key}]: ${(error as Error).message}`);
      }
      if (part.file.truncated) {
        await ctx.objects.delete(file.key, false);
        throw new ApiError(400, 'importer.fileTooLarge', `file is larger than the importer's limit of ${2 * 1024 ** 3} bytes`);
      }
      file.sizeBytes = counter.bytes;
    }
    if (!file) throw new ApiError(400, 'importer.missingData', 'missing the file part "data" in the multipart form');
    const fields = decodePairs(pairs);
    const name = parseString(fields.name);
    const record: FileRecord = {
      ...file,
      name: name ? name.replace(/[^A-Za-z0-9._-]/g, '_') : file.name,
      tags: [...new Set(parseList(fields.tags) ?? [])],
      isPermanent: parseBool(fields.isPermanent) ?? file.isPermanent,
      isPublic: parseBool(fields.isPublic) ?? file.isPublic,
    };
    ctx.state.put('file', record.id, record);
    return fileResource(ctx, record);
  });
}
