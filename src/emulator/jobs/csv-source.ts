import { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { JobError } from '../errors';
import { type FileRecord } from '../model';
import { type ObjectStore } from '../object-store';

/** One part of a file's content: the whole file, or one slice of a sliced file. */
export interface CsvPart {
  /** Where the content came from, for messages: `file 12` or `file 12, slice 3 (key)`. */
  label: string;
  /** 0 for the first (or only) part. */
  index: number;
  open(): Promise<Readable>;
}

/** Keys of a sliced file's slices, in manifest order. */
export async function manifestKeys(objects: ObjectStore, file: FileRecord): Promise<string[]> {
  let manifest: { entries?: { url?: unknown }[] };
  try {
    manifest = JSON.parse(await objects.getText(`${file.key}manifest`));
  } catch (error) {
    throw new JobError(
      'storage.files.manifestInvalid',
      `manifest of sliced file ${file.id} is missing or not JSON [key=${file.key}manifest]: ${(error as Error).message}`,
    );
  }
  if (!Array.isArray(manifest.entries)) {
    throw new JobError('storage.files.manifestInvalid', `manifest of sliced file ${file.id} has no "entries" array [key=${file.key}manifest]`);
  }
  return manifest.entries.map((entry, i) => {
    const url = typeof entry?.url === 'string' ? entry.url : '';
    const key = objects.keyOfEntryUrl(url);
    if (key === undefined) {
      throw new JobError('storage.files.manifestInvalid', `manifest entry ${i} of file ${file.id} must be "${objects.entryUrl('<key>')}", got "${url}"`);
    }
    return key;
  });
}

/** The parts of a file to read in order; a sliced file is read through its manifest. */
export async function csvParts(objects: ObjectStore, file: FileRecord): Promise<CsvPart[]> {
  if (!file.isSliced) {
    return [{ label: `file ${file.id}`, index: 0, open: () => openMaybeGzip(objects, file.key) }];
  }
  const keys = await manifestKeys(objects, file);
  return keys.map((key, index) => ({ label: `file ${file.id}, slice ${index} (${key})`, index, open: () => openMaybeGzip(objects, key) }));
}

/** Opens an object, gunzipping it when it starts with the gzip magic bytes. */
async function openMaybeGzip(objects: ObjectStore, key: string): Promise<Readable> {
  let body: Readable;
  try {
    body = await objects.get(key);
  } catch (error) {
    throw new JobError('storage.files.notUploaded', `file content is missing in object storage [key=${key}]: ${(error as Error).name}`);
  }
  return sniffGzip(body);
}

/** Passes content through, gunzipped when its first bytes are the gzip magic number. */
export async function sniffGzip(body: Readable): Promise<Readable> {
  const iterator = body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const first = await iterator.next();
  if (first.done) return Readable.from([]);
  const head = first.value;
  async function* all(): AsyncGenerator<Buffer> {
    yield head;
    for (;;) {
      const next = await iterator.next();
      if (next.done) return;
      yield next.value;
    }
  }
  const stream = Readable.from(all(), { objectMode: false });
  if (!(head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b)) return stream;
  const gunzip = createGunzip();
  stream.on('error', (error) => gunzip.destroy(error));
  return stream.pipe(gunzip);
}
