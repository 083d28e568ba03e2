import { type FastifyInstance } from 'fastify';
import { type EmulatorContext } from '../context';
import { DEFAULT_BRANCH_ID, findBranch } from '../branches';
import { notFound, validation } from '../errors';
import { type FormObject, parseIntParam, parseString } from '../form';
import { branchOf, readParams, runIdOf, tokenOf } from '../http';
import { eventResource } from '../events';
import { type EventRecord } from '../model';

/** Default and largest page of `GET events`. */
export const EVENTS_DEFAULT_LIMIT = 100;
export const EVENTS_MAX_LIMIT = 500;
/** Largest event `POST events` takes, bytes of its JSON (the service's limit: 200 KB). */
export const EVENT_MAX_BYTES = 200 * 1024;
const EVENT_TYPES = new Set(['info', 'success', 'warn', 'error']);

/** `params` or `results` of `POST events`: an object, or (the branch variant's documented form) a JSON string of one. */
function customData(raw: unknown, name: string): Record<string, unknown> {
  if (raw === undefined || raw === null || raw === '') return {};
  let value = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch {
      throw validation(`${name} must be an object or a JSON string of one; got ${JSON.stringify(raw.slice(0, 100))}`, 'storage.events.validation');
    }
  }
  if (typeof value !== 'object' || value === null) throw validation(`${name} must be an object; got ${JSON.stringify(raw)}`, 'storage.events.validation');
  return value as Record<string, unknown>;
}

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
  // `POST events`: an event of the caller's own component (`ext.<component>.`), answered 201 {id, uuid}.
  app.post('/events', async (request, reply) => {
    const token = tokenOf(request);
    const params = await readParams(request);
    const message = parseString(params.message)?.trim() ?? '';
    const component = parseString(params.component)?.trim() ?? '';
    if (!message) throw validation('message is required', 'storage.events.validation');
    if (!component)
      throw validation('component is required: the id of the component that logs the event, e.g. "keboola.ex-db-mysql"', 'storage.events.validation');
    const type = parseString(params.type) ?? 'info';
    if (!EVENT_TYPES.has(type)) throw validation(`type must be info, success, warn or error; got ${JSON.stringify(type)}`, 'storage.events.validation');
    const duration = params.duration === undefined || params.duration === '' ? undefined : Number(params.duration);
    if (duration !== undefined && !Number.isFinite(duration))
      throw validation(`duration must be a number of seconds; got ${JSON.stringify(params.duration)}`, 'storage.events.validation');
    if (JSON.stringify(params).length > EVENT_MAX_BYTES) throw validation(`the event is larger than ${EVENT_MAX_BYTES} bytes`, 'storage.events.tooLarge');
    const branch = findBranch(ctx, branchOf(request));
    const event = ctx.events.add({
      event: `ext.${component}.`,
      type: type as EventRecord['type'],
      message,
      component,
      description: parseString(params.description) ?? '',
      configurationId: parseString(params.configurationId) ?? null,
      ...(duration === undefined ? {} : { duration }),
      params: customData(params.params, 'params'),
      results: customData(params.results, 'results'),
      runId: parseString(params.runId) ?? runIdOf(request),
      objectType: '',
      objectId: '',
      objectName: '',
      bucketId: null,
      token: { id: token.id, description: token.description },
      idBranch: branch === 'default' ? DEFAULT_BRANCH_ID : branch.id,
    });
    return reply.code(201).send({ id: String(event.id), uuid: event.uuid });
  });

  // `GET events/{id}`: one event by its id or uuid, to the tokens that may list it.
  app.get('/events/:eventId', async (request) => {
    const token = tokenOf(request);
    const { eventId } = request.params as { eventId: string };
    const event = ctx.events.get(eventId);
    if (!event || !(token.isMasterToken || event.token.id === token.id || (event.bucketId !== null && ctx.tokens.allows(token, event.bucketId, 'read')))) {
      throw notFound('storage.events.notFound', `event ${eventId} not found`);
    }
    return eventResource(event);
  });

  app.get('/events', async (request) => {
    const token = tokenOf(request);
    const q = request.query as FormObject;
    const limit = Math.min(nonNegative(q, 'limit') ?? EVENTS_DEFAULT_LIMIT, EVENTS_MAX_LIMIT);
    const offset = nonNegative(q, 'offset') ?? 0;
    const sinceId = nonNegative(q, 'sinceId');
    const maxId = nonNegative(q, 'maxId');
    const runId = parseString(q.runId);
    const component = parseString(q.component);
    return ctx.events
      .list()
      .filter((e) => token.isMasterToken || e.token.id === token.id || (e.bucketId !== null && ctx.tokens.allows(token, e.bucketId, 'read')))
      .filter((e) => runId === undefined || e.runId === runId)
      .filter((e) => component === undefined || (e.component ?? 'storage') === component)
      .filter((e) => (sinceId === undefined || e.id > sinceId) && (maxId === undefined || e.id <= maxId))
      .slice(offset, offset + limit)
      .map(eventResource);
  });
}
