import { type FastifyInstance } from 'fastify';
import { type EmulatorContext } from '../context';
import { notFound } from '../errors';
import { type FormObject, parseIntParam } from '../form';
import { tokenOf } from '../http';
import { jobResource } from '../resources';
import { accessDenied } from '../tokens';

/** Jobs are never branch-scoped: `GET jobs`, `GET jobs/{id}`. A token sees the jobs it created; a master token all. */
export function registerJobRoutes(app: FastifyInstance, ctx: EmulatorContext): void {
  app.get('/jobs', async (request) => {
    const q = request.query as FormObject;
    const limit = Math.min(Math.max(parseIntParam(q.limit) ?? 100, 1), 1000);
    const offset = Math.max(parseIntParam(q.offset) ?? 0, 0);
    const token = tokenOf(request);
    return ctx.jobs
      .list()
      .filter((j) => ctx.tokens.canReadJob(token, j.creatorToken))
      .slice(offset, offset + limit)
      .map((j) => jobResource(ctx, j));
  });

  app.get('/jobs/:jobId', async (request) => {
    const { jobId } = request.params as { jobId: string };
    const id = parseIntParam(jobId);
    const job = id === undefined ? undefined : ctx.jobs.get(id);
    if (!job) throw notFound('storage.jobs.notFound', `job ${jobId} not found`);
    const token = tokenOf(request);
    if (!ctx.tokens.canReadJob(token, job.creatorToken)) {
      throw accessDenied(`job ${job.id} was created by token ${job.creatorToken.id}; token ${token.id} (${token.description}) sees only its own jobs`);
    }
    return jobResource(ctx, job);
  });
}
