import { type EmulatorContext } from './context';
import { validation } from './errors';
import { type CreatorToken, type FileRecord } from './model';
import { manifestKeys } from './jobs/csv-source';
import { FILE_MAX_AGE_DAYS } from './resources';
import { formatTimestamp } from './time';

/** File names keep letters, digits, dot, dash and underscore; anything else becomes `_` (like the real service). */
export function sanitizeFileName(name: string): string {
  const cleaned = name.replace(/[^A-Za-z0-9._-]/g, '_');
  return cleaned || 'file';
}

/** `exp-15/<project>/files/<yyyy>/<mm>/<dd>/<id>.<name>`; permanent files have no `exp-` prefix. */
export function fileKey(ctx: EmulatorContext, id: number, name: string, isPermanent: boolean, created: string): string {
  const [yyyy, mm, dd] = created.slice(0, 10).split('-');
  return `${isPermanent ? '' : `exp-${FILE_MAX_AGE_DAYS}/`}${ctx.projectId}/files/${yyyy}/${mm}/${dd}/${id}.${name}`;
}

/**
 * Longest last segment of an object key (`<id>.<name>`), in UTF-8 bytes: MinIO keeps each segment as a file name and
 * refuses longer ones ("Object name contains unsupported characters"); the whole key stays far below S3's 1,024.
 */
export const MAX_OBJECT_NAME_BYTES = 255;

export interface NewFile {
  name: string;
  sizeBytes?: number;
  isPermanent: boolean;
  isSliced: boolean;
  isEncrypted: boolean;
  isPublic: boolean;
  tags: string[];
  creatorToken: CreatorToken;
  branchId: string;
  /** `X-KBC-RunId` of the creating request. */
  runId?: string | null;
  /** Known already (importer, exports). */
  measured?: boolean;
  id?: number;
  created?: string;
}

export function newFileRecord(ctx: EmulatorContext, input: NewFile): FileRecord {
  const id = input.id ?? ctx.nextId('file');
  const created = input.created ?? formatTimestamp();
  const name = sanitizeFileName(input.name);
  const key = fileKey(ctx, id, name, input.isPermanent, created);
  // a longer name could never be written to the object store (nor fit the upload credentials' session policy,
  // which MinIO caps at 2 KiB): refused as a bad name, never a 500 when the credentials are issued
  const objectName = `${id}.${name}`;
  if (objectName.length > MAX_OBJECT_NAME_BYTES) {
    throw validation(
      `name is too long: ${name.length} characters; the stored object's name "${id}.<name>" may have at most ${MAX_OBJECT_NAME_BYTES} characters, so use at most ${MAX_OBJECT_NAME_BYTES - `${id}.`.length} characters`,
    );
  }
  return {
    id,
    created,
    name,
    key,
    isSliced: input.isSliced,
    isPublic: input.isPublic,
    isEncrypted: input.isEncrypted,
    isPermanent: input.isPermanent,
    tags: [...new Set(input.tags)],
    sizeBytes: input.sizeBytes ?? null,
    sizeMeasured: input.measured ?? false,
    creatorToken: input.creatorToken,
    branchId: input.branchId,
    runId: input.runId ?? null,
    fileType: name.endsWith('.gz') ? 'gz' : (/\.([A-Za-z0-9]+)$/.exec(name)?.[1] ?? '').toLowerCase() || 'unknown',
  };
}

/**
 * Measures a file's stored size once it was uploaded (HeadObject on the object, or on every slice of the manifest),
 * and remembers it. Files not uploaded yet keep their declared size.
 */
export async function measureFile(ctx: EmulatorContext, file: FileRecord): Promise<FileRecord> {
  if (file.sizeMeasured) return file;
  let size: number | undefined;
  try {
    if (file.isSliced) {
      if ((await ctx.objects.size(`${file.key}manifest`)) === undefined) return file;
      const sizes = await Promise.all((await manifestKeys(ctx.objects, file)).map((k) => ctx.objects.size(k)));
      if (sizes.some((s) => s === undefined)) return file;
      size = sizes.reduce<number>((a, b) => a + (b ?? 0), 0);
    } else {
      size = await ctx.objects.size(file.key);
    }
  } catch {
    return file;
  }
  if (size === undefined) return file;
  const measured = { ...file, sizeBytes: size, sizeMeasured: true };
  if (ctx.state.get('file', file.id)) ctx.state.put('file', file.id, measured);
  return measured;
}
