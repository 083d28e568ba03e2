import { Context } from '@temporalio/activity';
import { createHash } from 'node:crypto';
import { Transform } from 'node:stream';
import { isSapiError } from '../errors';
import { DEFAULT_RECONCILE_DELAYS_MS, findFilesOfRun } from '../storage-api';
import type { ActivityDeps } from './deps';
import { activityMarker, asActivity } from './context';

export interface UploadViaImporterInput {
  connection?: string;
  source: string;
  name?: string;
  tags?: string[];
  /** The worker's grant for a staged file it built (an extraction's load). */
  sourceGrant?: string;
}

export interface UploadViaImporterResult {
  fileId: number;
  bytes: number;
  sha256: string;
}

/**
 * Sends the source to the importer service (`upload-file`, multipart `data`) in one streamed POST. Simpler than
 * the direct path but not resumable: a failed attempt starts again (the importer's limit is 2 GB per file). The
 * request carries the activity's marker as `X-KBC-RunId`: a retry whose earlier attempt stored the file but lost
 * the answer finds that file (same marker, name and size) instead of uploading a second one.
 */
export function uploadViaImporter(deps: ActivityDeps) {
  return (input: UploadViaImporterInput): Promise<UploadViaImporterResult> =>
    asActivity(async () => {
      const context = Context.current();
      const signal = context.cancellationSignal;
      const storage = deps.storage(input.connection);
      const runId = activityMarker();
      const source = await deps.confinement.openSource(input.source, 'source', { signal, grant: input.sourceGrant });
      const name = input.name ?? baseName(source.description);
      /** The file an earlier request of this activity stored (found by our marker, name and size), as a result. */
      const stored = async (delaysMs?: readonly number[]): Promise<UploadViaImporterResult | undefined> => {
        const files = await findFilesOfRun(storage, runId, { delaysMs, signal });
        const earlier = files.find((f) => f.name === name && (source.size === undefined || f.sizeBytes === source.size));
        if (!earlier) return undefined;
        const hash = createHash('sha256');
        let bytes = 0;
        for await (const chunk of await source.open(0, signal)) {
          hash.update(chunk as Buffer);
          bytes += (chunk as Buffer).length;
        }
        return { fileId: Number(earlier.id), bytes, sha256: hash.digest('hex') };
      };
      if (context.info.attempt > 1) {
        // an earlier attempt may have uploaded the file and lost the answer
        const earlier = await stored();
        if (earlier) return earlier;
      }
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
      // liveness while the one POST runs comes from asActivity's keep-alive heartbeat (a retry starts over anyway)
      let file;
      try {
        file = await storage.uploadViaImporter({ stream: counted, sizeBytes: source.size, name, tags: input.tags, runId, signal });
      } catch (err) {
        // the importer may still be storing it: wait for our file before the retry sends the bytes again
        const earlier = isSapiError(err) && err.mayHaveReachedService ? await stored(DEFAULT_RECONCILE_DELAYS_MS) : undefined;
        if (earlier) return earlier;
        throw err;
      }
      return { fileId: Number(file.id), bytes, sha256: hash.digest('hex') };
    });
}

function baseName(description: string): string {
  const path = description.replace(/[?#].*$/, '');
  return path.slice(path.lastIndexOf('/') + 1) || 'data.csv';
}
