import { Context } from '@temporalio/activity';
import { createHash } from 'node:crypto';
import { Transform } from 'node:stream';
import { openSource } from '../object-storage/sources';
import type { ActivityDeps } from './deps';
import { asActivity } from './context';

export interface UploadViaImporterInput {
  connection?: string;
  source: string;
  name?: string;
  tags?: string[];
}

export interface UploadViaImporterResult {
  fileId: number;
  bytes: number;
  sha256: string;
}

/**
 * Sends the source to the importer service (`upload-file`, multipart `data`) in one streamed POST. Simpler than
 * the direct path but not resumable: a failed attempt starts again (the importer's limit is 2 GB per file).
 */
export function uploadViaImporter(deps: ActivityDeps) {
  return (input: UploadViaImporterInput): Promise<UploadViaImporterResult> =>
    asActivity(async () => {
      const signal = Context.current().cancellationSignal;
      const source = await openSource(input.source, { s3: /^s3:/i.test(input.source) ? deps.userS3() : undefined, signal });
      const hash = createHash('sha256');
      let bytes = 0;
      const counted = (await source.open(0, signal)).pipe(
        new Transform({
          transform(chunk: Buffer, _encoding, done) {
            hash.update(chunk);
            bytes += chunk.length;
            done(null, chunk);
          },
        }),
      );
      const heartbeat = setInterval(() => Context.current().heartbeat({ bytes }), 5_000);
      try {
        const file = await deps.storage(input.connection).uploadViaImporter({
          stream: counted,
          sizeBytes: source.size,
          name: input.name ?? baseName(source.description),
          tags: input.tags,
          signal,
        });
        return { fileId: Number(file.id), bytes, sha256: hash.digest('hex') };
      } finally {
        clearInterval(heartbeat);
      }
    });
}

function baseName(description: string): string {
  const path = description.replace(/[?#].*$/, '');
  return path.slice(path.lastIndexOf('/') + 1) || 'data.csv';
}
