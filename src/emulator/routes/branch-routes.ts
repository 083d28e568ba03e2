import { type FastifyInstance } from 'fastify';
import { branchNameTaken, branchResource, duplicateBranchName, findBranch, listBranches, saveBranch, setDefaultBranchDescription } from '../branches';
import { type EmulatorContext } from '../context';
import { ApiError, validation } from '../errors';
import { parseString } from '../form';
import { readParams, runIdOf, tokenOf } from '../http';
import { jobResource } from '../resources';
import { accessDenied } from '../tokens';

function duplicateName(name: string): ApiError {
  const { code, message } = duplicateBranchName(name);
  return new ApiError(400, code, message);
}

/**
 * Development branches: `GET dev-branches` (newest first, the default branch last, like the service),
 * `GET dev-branches/{id}`, `PUT dev-branches/{id}` (name, description; the default branch's name stays),
 * `POST dev-branches` and `DELETE dev-branches/{id}` (both → 202 + job). Changing them needs a master token; any token
 * may read them.
 */
export function registerBranchRoutes(app: FastifyInstance, ctx: EmulatorContext): void {
  app.get('/dev-branches', async () => [
    ...listBranches(ctx)
      .reverse()
      .map((b) => branchResource(ctx, b)),
    branchResource(ctx, 'default'),
  ]);

  app.get('/dev-branches/:branchId', async (request) => branchResource(ctx, findBranch(ctx, (request.params as { branchId: string }).branchId)));

  app.put('/dev-branches/:branchId', async (request) => {
    const token = tokenOf(request);
    if (!token.isMasterToken) throw accessDenied(`changing a development branch needs a master token; token ${token.id} (${token.description}) is not one`);
    const branch = findBranch(ctx, (request.params as { branchId: string }).branchId);
    const params = await readParams(request);
    const name = parseString(params.name)?.trim();
    const description = parseString(params.description);
    if (branch === 'default') {
      if (name !== undefined && name !== '' && name !== 'Main') throw validation('You can not update default branch name.', 'storage.devBranches.validation');
      if (description !== undefined) setDefaultBranchDescription(ctx, description);
      return branchResource(ctx, 'default');
    }
    if (name !== undefined && name !== '') {
      if (name.length > 255) throw validation(`name must be at most 255 characters; got ${name.length}`, 'storage.devBranches.validation');
      if (branchNameTaken(ctx, name, branch.id)) throw duplicateName(name);
    }
    const updated = { ...branch, ...(name ? { name } : {}), ...(description !== undefined ? { description } : {}) };
    saveBranch(ctx, updated);
    return branchResource(ctx, updated);
  });

  app.post('/dev-branches', async (request, reply) => {
    const token = tokenOf(request);
    if (!token.isMasterToken) throw accessDenied(`creating a development branch needs a master token; token ${token.id} (${token.description}) is not one`);
    const params = await readParams(request);
    const name = parseString(params.name)?.trim() ?? '';
    if (!name || name.length > 255)
      throw validation(`name is required, at most 255 characters; got ${JSON.stringify(params.name ?? null)}`, 'storage.devBranches.validation');
    if (branchNameTaken(ctx, name)) throw duplicateName(name);
    const job = ctx.jobs.create({
      operationName: 'devBranchCreate',
      operationParams: { name, description: parseString(params.description) ?? '' },
      tableId: null,
      queueKey: 'dev-branches',
      creatorToken: { id: token.id, description: token.description },
      runId: runIdOf(request),
    });
    return reply.code(202).send(jobResource(ctx, job));
  });

  app.delete('/dev-branches/:branchId', async (request, reply) => {
    const token = tokenOf(request);
    if (!token.isMasterToken) throw accessDenied(`deleting a development branch needs a master token; token ${token.id} (${token.description}) is not one`);
    const branch = findBranch(ctx, (request.params as { branchId: string }).branchId);
    if (branch === 'default') throw validation('Cannot delete Main branch', 'storage.devBranches.cannotDeleteDefault');
    const job = ctx.jobs.create({
      operationName: 'devBranchDelete',
      operationParams: { branchId: branch.id, name: branch.name },
      tableId: null,
      queueKey: 'dev-branches',
      creatorToken: { id: token.id, description: token.description },
      runId: runIdOf(request),
    });
    return reply.code(202).send(jobResource(ctx, job));
  });
}
