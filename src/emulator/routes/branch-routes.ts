import { type FastifyInstance } from 'fastify';
import { branchResource, findBranch, listBranches } from '../branches';
import { type EmulatorContext } from '../context';
import { validation } from '../errors';
import { parseString } from '../form';
import { readParams, runIdOf, tokenOf } from '../http';
import { jobResource } from '../resources';
import { accessDenied } from '../tokens';

/**
 * Development branches: `GET dev-branches`, `GET dev-branches/{id}`, `POST dev-branches` and
 * `DELETE dev-branches/{id}` (both → 202 + job; master tokens only). Any token may read them.
 */
export function registerBranchRoutes(app: FastifyInstance, ctx: EmulatorContext): void {
  app.get('/dev-branches', async () => [branchResource('default'), ...listBranches(ctx).map(branchResource)]);

  app.get('/dev-branches/:branchId', async (request) => branchResource(findBranch(ctx, (request.params as { branchId: string }).branchId)));

  app.post('/dev-branches', async (request, reply) => {
    const token = tokenOf(request);
    if (!token.isMasterToken) throw accessDenied(`creating a development branch needs a master token; token ${token.id} (${token.description}) is not one`);
    const params = await readParams(request);
    const name = parseString(params.name)?.trim() ?? '';
    if (!name || name.length > 255) throw validation(`name is required, at most 255 characters; got ${JSON.stringify(params.name ?? null)}`, 'storage.devBranches.validation');
    if (name === 'Main' || listBranches(ctx).some((b) => b.name === name)) {
      throw validation(`a development branch named "${name}" already exists`, 'storage.devBranches.alreadyExists');
    }
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
    if (branch === 'default') throw validation('the default branch cannot be deleted', 'storage.devBranches.cannotDeleteDefault');
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
