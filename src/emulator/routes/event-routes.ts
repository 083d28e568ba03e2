import { type FastifyInstance } from 'fastify';
import { type EmulatorContext } from '../context';
import { validation } from '../errors';
import { type FormObject, parseIntParam, parseString } from '../form';
import { tokenOf } from '../http';
import { eventResource } from '../events';

/** Default and largest page of `GET events`. */
export const EVENTS_DEFAULT_LIMIT = 100;
export const EVENTS_MAX_LIMIT = 500;

function nonNegative(q: FormObject, name: string): number | undefined {
  if (q[name] === undefined || q[name] === '') return undefined;
  const value = parseIntParam(q[name]);
  if (value === undefined || value < 0) throw validation(`${name} must be a non-negative integer; got ${JSON.stringify(q[name])}`);
  return value;
}

/**
 * `GET events`, newest first: `runId`, `limit` (default 100, at most 500), `offset`, `sinceId`/`maxId` (event ids).
 * A master token sees every event; another token those of the buckets it can read and its own.
 */
export function registerEventRoutes(app: FastifyInstance, ctx: EmulatorContext): void {
  app.get('/events', async (request) => {
    const token = tokenOf(request);
    const q = request.query as FormObject;
    const limit = Math.min(nonNegative(q, 'limit') ?? EVENTS_DEFAULT_LIMIT, EVENTS_MAX_LIMIT);
    const offset = nonNegative(q, 'offset') ?? 0;
    const sinceId = nonNegative(q, 'sinceId');
    const maxId = nonNegative(q, 'maxId');
    const runId = parseString(q.runId);
    return ctx.events
      .list()
      .filter((e) => token.isMasterToken || e.token.id === token.id || (e.bucketId !== null && ctx.tokens.allows(token, e.bucketId, 'read')))
      .filter((e) => runId === undefined || e.runId === runId)
      .filter((e) => (sinceId === undefined || e.id > sinceId) && (maxId === undefined || e.id <= maxId))
      .slice(offset, offset + limit)
      .map(eventResource);
  });
}
