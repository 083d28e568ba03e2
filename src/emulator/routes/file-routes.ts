import { type FastifyInstance } from 'fastify';
import { type EmulatorContext } from '../context';
import { notFound, validation } from '../errors';
import { measureFile, newFileRecord } from '../files';
import { type FormObject, parseBool, parseIntParam, parseList, parseString } from '../form';
import { branchOf, readParams, runIdOf, tokenOf } from '../http';
import { type FileRecord, type TokenRecord } from '../model';
import { fileResource } from '../resources';
import { accessDenied } from '../tokens';

export function findFile(ctx: EmulatorContext, fileId: unknown): FileRecord {
  const id = parseIntParam(fileId);
  const file = id === undefined ? undefined : ctx.state.get<FileRecord>('file', id);
  if (!file) throw notFound('storage.files.notFound', `file ${String(fileId)} not found`);
  return file;
}

/** A file the token may read: its own, or any with `canReadAllFileUploads` (and master tokens); else the service's 403. */
export function readableFile(ctx: EmulatorContext, token: TokenRecord, fileId: unknown): FileRecord {
  const file = findFile(ctx, fileId);
  if (!ctx.tokens.canReadFile(token, file.creatorToken)) {
    throw accessDenied(
      `file ${file.id} was created by token ${file.creatorToken.id}; token ${token.id} (${token.description}) sees only its own files (it lacks canReadAllFileUploads)`,
    );
  }
  return file;
}

/** Longest tag a file takes. */
const MAX_TAG_LENGTH = 255;

function bool(params: FormObject, name: string, fallback: boolean): boolean {
  const raw = params[name];
  if (raw === undefined) return fallback;
  const value = parseBool(raw);
  if (value === undefined) throw validation(`${name} must be a boolean (true, false, 1, 0); got ${JSON.stringify(raw)}`);
  return value;
}

/** Files: prepare, detail (with read credentials), list, delete. */
export function registerFileRoutes(app: FastifyInstance, ctx: EmulatorContext): void {
  app.post('/files/prepare', async (request, reply) => {
    const params = await readParams(request);
    const name = parseString(params.name)?.trim();
    if (!name) throw validation('name is required: the file name, e.g. "data.csv"');
    let sizeBytes: number | undefined;
    if (params.sizeBytes !== undefined && params.sizeBytes !== '') {
      sizeBytes = parseIntParam(params.sizeBytes);
      if (sizeBytes === undefined || sizeBytes < 0) throw validation(`sizeBytes must be a non-negative integer; got ${JSON.stringify(params.sizeBytes)}`);
    }
    const token = tokenOf(request);
    const file = newFileRecord(ctx, {
      name,
      sizeBytes,
      isPermanent: bool(params, 'isPermanent', false),
      isSliced: bool(params, 'isSliced', false),
      isEncrypted: bool(params, 'isEncrypted', false),
      isPublic: bool(params, 'isPublic', false),
      tags: parseList(params.tags) ?? [],
      creatorToken: { id: token.id, description: token.description },
      branchId: branchOf(request),
      runId: runIdOf(request),
    });
    bool(params, 'notify', false);
    bool(params, 'federationToken', true);
    const upload = await ctx.objects.uploadFields(file.key, file.isSliced, file.isEncrypted, ctx.faults.takeCredentialsExpiry('upload'));
    ctx.state.put('file', file.id, file);
    return reply.code(201).send({ ...fileResource(ctx, file), ...upload });
  });

  app.get('/files', async (request) => {
    const token = tokenOf(request);
    const q = request.query as FormObject;
    const limit = Math.min(Math.max(parseIntParam(q.limit) ?? 100, 1), 1000);
    const offset = Math.max(parseIntParam(q.offset) ?? 0, 0);
    const tags = parseList(q.tags) ?? [];
    const sinceId = parseIntParam(q.sinceId);
    const maxId = parseIntParam(q.maxId);
    const runId = parseString(q.runId);
    const files = ctx.state
      .all<FileRecord>('file')
      .filter((f) => ctx.tokens.canReadFile(token, f.creatorToken))
      .filter((f) => tags.every((t) => f.tags.includes(t)))
      .filter((f) => !runId || f.runId === runId)
      .filter((f) => (sinceId === undefined || f.id > sinceId) && (maxId === undefined || f.id <= maxId))
      .sort((a, b) => b.id - a.id)
      .slice(offset, offset + limit);
    const measured = await Promise.all(files.map((f) => measureFile(ctx, f)));
    return measured.map((f) => fileResource(ctx, f));
  });

  app.get('/files/:fileId', async (request) => {
    const file = await measureFile(ctx, readableFile(ctx, tokenOf(request), (request.params as { fileId: string }).fileId));
    const resource = fileResource(ctx, file);
    if (parseBool((request.query as FormObject).federationToken)) {
      return { ...resource, ...(await ctx.objects.readFields(file.key, file.isSliced, ctx.faults.takeCredentialsExpiry('read'))) };
    }
    return resource;
  });

  // Tags of a stored file: `POST files/{id}/tags {tag}` adds one (a tag it has already stays once), `DELETE
  // files/{id}/tags/{tag}` removes one (one it does not have is no error); both answer 204 like the service.
  app.post('/files/:fileId/tags', async (request, reply) => {
    const file = readableFile(ctx, tokenOf(request), (request.params as { fileId: string }).fileId);
    const params = await readParams(request);
    const tag = parseString(params.tag)?.trim();
    if (!tag) throw validation(`tag is required: the tag to add to file ${file.id}; got ${JSON.stringify(params.tag ?? null)}`);
    if (tag.length > MAX_TAG_LENGTH) throw validation(`tag must be at most ${MAX_TAG_LENGTH} characters; got ${tag.length}`);
    if (!file.tags.includes(tag)) ctx.state.put('file', file.id, { ...file, tags: [...file.tags, tag] });
    return reply.code(204).send();
  });

  app.delete('/files/:fileId/tags/:tag', async (request, reply) => {
    const { fileId, tag } = request.params as { fileId: string; tag: string };
    const file = readableFile(ctx, tokenOf(request), fileId);
    if (file.tags.includes(tag)) ctx.state.put('file', file.id, { ...file, tags: file.tags.filter((t) => t !== tag) });
    return reply.code(204).send();
  });

  app.delete('/files/:fileId', async (request, reply) => {
    const file = readableFile(ctx, tokenOf(request), (request.params as { fileId: string }).fileId);
    await ctx.objects.delete(file.key, file.isSliced);
    ctx.state.delete('file', file.id);
    return reply.code(204).send();
  });
}
