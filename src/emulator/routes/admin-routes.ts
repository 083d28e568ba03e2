import { type FastifyInstance } from 'fastify';
import { z } from 'zod';
import { type EmulatorContext } from '../context';
import { validation } from '../errors';
import { credentialsExpirySchema, type FaultRule, faultRuleSchema, jobFailureSchema, jobHoldSchema, jobReleaseSchema, jobSlowdownSchema } from '../faults';
import { type RequestLog } from '../request-log';

const adminFaultSchema = z.union([
  z.object({ rules: z.array(faultRuleSchema) }),
  z.object({ failJob: jobFailureSchema }),
  z.object({ slowJob: jobSlowdownSchema }),
  z.object({ holdJob: jobHoldSchema }),
  z.object({ releaseJobs: jobReleaseSchema }),
  z.object({ expireCredentials: credentialsExpirySchema }),
  faultRuleSchema,
]);

/**
 * Test controls: `POST/GET/DELETE /_emulator/faults`, `GET/DELETE /_emulator/requests`. No Storage token; the
 * `adminToken` bearer secret when the emulator has one (checked in the app's request hook).
 */
export function registerAdminRoutes(app: FastifyInstance, ctx: EmulatorContext, requestLog: RequestLog): void {
  app.post('/faults', async (request, reply) => {
    const parsed = adminFaultSchema.safeParse(request.body);
    if (!parsed.success) throw validation(`invalid fault: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ')}`);
    const body = parsed.data;
    if ('rules' in body) return reply.code(201).send({ ids: body.rules.map((r) => ctx.faults.add(r as FaultRule)) });
    if ('failJob' in body) {
      ctx.faults.failJob(body.failJob);
      return reply.code(201).send({ ok: true });
    }
    if ('slowJob' in body) {
      ctx.faults.slowJob(body.slowJob);
      return reply.code(201).send({ ok: true });
    }
    if ('holdJob' in body) {
      ctx.faults.holdJob(body.holdJob);
      return reply.code(201).send({ ok: true });
    }
    if ('releaseJobs' in body) return reply.code(200).send({ released: ctx.faults.releaseJobs(body.releaseJobs.operationName) });
    if ('expireCredentials' in body) {
      ctx.faults.expireCredentials(body.expireCredentials);
      return reply.code(201).send({ ok: true });
    }
    return reply.code(201).send({ ids: [ctx.faults.add(body as FaultRule)] });
  });
  app.get('/faults', async () => ctx.faults.list().map((r) => ({ ...r, path: r.path instanceof RegExp ? r.path.source : r.path })));
  app.delete('/faults', async (_request, reply) => {
    ctx.faults.clear();
    return reply.code(204).send();
  });
  app.get('/requests', async () => requestLog.entries);
  app.delete('/requests', async (_request, reply) => {
    requestLog.clear();
    return reply.code(204).send();
  });
}
