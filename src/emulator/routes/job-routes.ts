import { type FastifyInstance } from 'fastify';
import { type EmulatorContext } from '../context';
import { notFound } from '../errors';
import { type FormObject, parseIntParam } from '../form';
import { jobResource } from '../resources';

/** Jobs are never branch-scoped: `GET jobs`, `GET jobs/{id}`. */
export function registerJobRoutes(app: FastifyInstance, ctx: EmulatorContext): void {
  app.get('/jobs', async (request) => {
    const q = request.query as FormObject;
    const limit = Math.min(Math.max(parseIntParam(q.limit) ?? 100, 1), 1000);
    const offset = Math.max(parseIntParam(q.offset) ?? 0, 0);
    return ctx.jobs.list().slice(offset, offset + limit).map((j) => jobResource(ctx, j));
  });

  app.get('/jobs/:jobId', async (request) => {
    const { jobId } = request.params as { jobId: string };
    const id = parseIntParam(jobId);
    const job = id === undefined ? undefined : ctx.jobs.get(id);
    if (!job) throw notFound('storage.jobs.notFound', `job ${jobId} not found`);
    return jobResource(ctx, job);
  });
}
