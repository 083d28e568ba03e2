/**
 * Table triggers (`/v2/storage/triggers`), stored as the service's API documentation shows them. The emulator runs no
 * component, so a trigger never fires: `lastRun` stays null.
 */
import { type FastifyInstance, type FastifyRequest } from 'fastify';
import { type EmulatorContext } from '../context';
import { notFound, validation } from '../errors';
import { type FormObject, parseIntParam, parseList, parseString } from '../form';
import { readParams, tokenOf } from '../http';
import { type CreatorToken, type TokenRecord } from '../model';
import { accessDenied } from '../tokens';

const TRIGGER = 'trigger';

interface TriggerRecord {
  id: number;
  runWithTokenId: number;
  component: string;
  configurationId: string;
  lastRun: string | null;
  coolDownPeriodMinutes: number;
  creatorToken: CreatorToken;
  tableIds: string[];
}

function triggerResource(t: TriggerRecord): Record<string, unknown> {
  return {
    id: String(t.id),
    runWithTokenId: t.runWithTokenId,
    component: t.component,
    configurationId: t.configurationId,
    lastRun: t.lastRun,
    coolDownPeriodMinutes: t.coolDownPeriodMinutes,
    creatorToken: t.creatorToken,
    tables: t.tableIds.map((tableId) => ({ tableId })),
  };
}

/** A master token, one with `canManageBuckets`, or one with `componentAccess` to the component (like the service). */
function authorize(token: TokenRecord, component: string): void {
  if (token.isMasterToken || token.canManageBuckets || (token.componentAccess ?? []).includes(component)) return;
  throw accessDenied(
    `triggers of ${component} need a master token, canManageBuckets or componentAccess to ${component}; token ${token.id} (${token.description}) has none`,
  );
}

/** `POST/GET triggers`, `GET/PUT/DELETE triggers/{id}`. */
export function registerTriggerRoutes(app: FastifyInstance, ctx: EmulatorContext): void {
  const find = (request: FastifyRequest): TriggerRecord => {
    const { triggerId } = request.params as { triggerId: string };
    const trigger = /^\d+$/.test(triggerId) ? ctx.state.get<TriggerRecord>(TRIGGER, Number(triggerId)) : undefined;
    if (!trigger) throw notFound('storage.triggers.notFound', `Trigger ${triggerId} not found`);
    return trigger;
  };
  /** Checks and applies the fields of a create (all required) or an update (those given). */
  const apply = (params: FormObject, into: Partial<TriggerRecord>, create: boolean): void => {
    const need = (name: string) => create && (params[name] === undefined || params[name] === '');
    for (const name of ['runWithTokenId', 'component', 'configurationId', 'coolDownPeriodMinutes', 'tableIds']) {
      if (need(name)) throw validation(`${name} is required`, 'storage.triggers.validation');
    }
    if (params.runWithTokenId !== undefined) {
      const id = parseIntParam(params.runWithTokenId);
      if (id === undefined || !ctx.tokens.byId(id))
        throw validation(`runWithTokenId ${JSON.stringify(params.runWithTokenId)} is not a token of the project`, 'storage.triggers.validation');
      into.runWithTokenId = id;
    }
    if (params.component !== undefined) into.component = parseString(params.component) ?? '';
    if (params.configurationId !== undefined) into.configurationId = parseString(params.configurationId) ?? '';
    if (params.coolDownPeriodMinutes !== undefined) {
      const minutes = parseIntParam(params.coolDownPeriodMinutes);
      if (minutes === undefined || minutes < 1)
        throw validation(
          `coolDownPeriodMinutes must be a whole number of minutes, at least 1; got ${JSON.stringify(params.coolDownPeriodMinutes)}`,
          'storage.triggers.validation',
        );
      into.coolDownPeriodMinutes = minutes;
    }
    if (params.tableIds !== undefined) {
      const tableIds = parseList(params.tableIds) ?? [];
      if (!tableIds.length) throw validation('tableIds must list at least one table', 'storage.triggers.validation');
      const missing = tableIds.filter((id) => !ctx.tables.get(id));
      if (missing.length) throw validation(`tableIds: ${missing.join(', ')} not found`, 'storage.triggers.validation');
      into.tableIds = tableIds;
    }
  };

  app.post('/triggers', async (request, reply) => {
    const token = tokenOf(request);
    const params = await readParams(request);
    const trigger = { id: ctx.nextId('trigger'), lastRun: null, creatorToken: { id: token.id, description: token.description } } as TriggerRecord;
    apply(params, trigger, true);
    authorize(token, trigger.component);
    ctx.state.put(TRIGGER, trigger.id, trigger);
    return reply.code(201).send(triggerResource(trigger));
  });

  app.get('/triggers', async (request) => {
    tokenOf(request);
    const q = request.query as FormObject;
    const component = parseString(q.component);
    const configurationId = parseString(q.configurationId);
    return ctx.state
      .all<TriggerRecord>(TRIGGER)
      .filter((t) => (component === undefined || t.component === component) && (configurationId === undefined || t.configurationId === configurationId))
      .sort((a, b) => a.id - b.id)
      .map(triggerResource);
  });

  app.get('/triggers/:triggerId', async (request) => {
    tokenOf(request);
    return triggerResource(find(request));
  });

  app.put('/triggers/:triggerId', async (request) => {
    const token = tokenOf(request);
    const trigger = find(request);
    authorize(token, trigger.component);
    const updated = { ...trigger };
    apply(await readParams(request), updated, false);
    authorize(token, updated.component);
    ctx.state.put(TRIGGER, updated.id, updated);
    return triggerResource(updated);
  });

  app.delete('/triggers/:triggerId', async (request, reply) => {
    const token = tokenOf(request);
    const trigger = find(request);
    authorize(token, trigger.component);
    ctx.state.delete(TRIGGER, trigger.id);
    return reply.code(204).send();
  });
}
