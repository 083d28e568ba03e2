/**
 * Components and configurations: configurations of any component id, kept per branch as the service
 * keeps them: the configuration JSON as sent, `state`, rows, a version (with `changeDescription`) for every change,
 * a soft delete (a second delete purges, on the default branch). The emulator runs no component; it stores what
 * clients write so they can list, read, update and delete it.
 */
import { randomBytes } from 'node:crypto';
import { type FastifyInstance, type FastifyRequest } from 'fastify';
import { DEFAULT_BRANCH_ID, findBranch } from '../branches';
import { type EmulatorContext } from '../context';
import { ApiError, notFound, validation } from '../errors';
import { type FormObject, listItems, parseBool, parseIntParam, parseList, parseString } from '../form';
import { branchOf, readParams, tokenOf } from '../http';
import { KNOWN_COMPONENTS, componentInfo, componentResource } from '../component-registry';
import { metadataResource } from '../metadata';
import { type CreatorToken, type TokenRecord } from '../model';
import { formatTimestamp } from '../time';
import { accessDenied } from '../tokens';

const CONFIG = 'componentConfig';
/** Largest `configuration` or `state`, bytes of JSON (the service's limit: 4 MB). */
export const CONFIGURATION_MAX_BYTES = 4 * 1024 * 1024;
const ID = /^[A-Za-z0-9_.-]{1,128}$/;

interface VersionInfo {
  version: number;
  created: string;
  creatorToken: CreatorToken;
  changeDescription: string;
  versionIdentifier: string;
}

interface RowRecord {
  id: string;
  name: string;
  description: string;
  configuration: unknown;
  state: unknown;
  isDisabled: boolean;
  version: number;
  created: string;
  creatorToken: CreatorToken;
  changeDescription: string;
}

interface ConfigSnapshot {
  name: string;
  description: string;
  configuration: unknown;
  isDeleted: boolean;
  rows: RowRecord[];
}

interface ConfigRecord extends ConfigSnapshot {
  branchId: number;
  componentId: string;
  id: string;
  created: string;
  creatorToken: CreatorToken;
  isDisabled: boolean;
  state: unknown;
  rowsSortOrder: string[];
  /** Every version, oldest first; the last is the current one. */
  versions: (VersionInfo & ConfigSnapshot)[];
}

/** A ULID-like version identifier (26 Crockford base32 characters, time first), as the service's `versionIdentifier`. */
function versionIdentifier(): string {
  const alphabet = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  let time = Date.now();
  let out = '';
  for (let i = 0; i < 10; i++) {
    out = alphabet[time % 32]! + out;
    time = Math.floor(time / 32);
  }
  for (const byte of randomBytes(16)) out += alphabet[byte % 32];
  return out;
}

const keyOf = (branchId: number, componentId: string, id: string): string => `${branchId}/${componentId}/${id}`;
const creatorOf = (token: TokenRecord): CreatorToken => ({ id: token.id, description: token.description });

/** `configuration` or `state` as sent: an object, or a JSON string of one (form bodies of the PHP and Python clients). */
function jsonParam(raw: unknown, name: string): unknown {
  if (raw === undefined) return undefined;
  let value = raw;
  if (typeof raw === 'string') {
    if (raw === '') return {};
    try {
      value = JSON.parse(raw);
    } catch {
      throw validation(`${name} must be a JSON object (or a string of one); got ${JSON.stringify(raw.slice(0, 100))}`, 'storage.components.validation');
    }
  }
  if (JSON.stringify(value).length > CONFIGURATION_MAX_BYTES)
    throw validation(`${name} is larger than ${CONFIGURATION_MAX_BYTES} bytes`, 'storage.components.validation');
  return value;
}

function versionOf(config: ConfigRecord): VersionInfo {
  const { version, created, creatorToken, changeDescription, versionIdentifier: id } = config.versions.at(-1)!;
  return { version, created, creatorToken, changeDescription, versionIdentifier: id };
}

function rowResource(row: RowRecord): Record<string, unknown> {
  return { ...row };
}

function configResource(config: ConfigRecord, options: { rows: boolean } = { rows: true }): Record<string, unknown> {
  const current = versionOf(config);
  return {
    id: config.id,
    name: config.name,
    description: config.description,
    created: config.created,
    creatorToken: config.creatorToken,
    version: current.version,
    changeDescription: current.changeDescription,
    isDisabled: config.isDisabled,
    isDeleted: config.isDeleted,
    configuration: config.configuration,
    state: config.state,
    currentVersion: {
      created: current.created,
      creatorToken: current.creatorToken,
      changeDescription: current.changeDescription,
      versionIdentifier: current.versionIdentifier,
    },
    rowsSortOrder: config.rowsSortOrder,
    ...(options.rows ? { rows: config.rows.map(rowResource) } : {}),
  };
}

function versionResource(v: VersionInfo & ConfigSnapshot, include: Set<string>): Record<string, unknown> {
  return {
    version: v.version,
    created: v.created,
    versionIdentifier: v.versionIdentifier,
    creatorToken: v.creatorToken,
    changeDescription: v.changeDescription,
    isDeleted: v.isDeleted,
    ...(include.has('name') ? { name: v.name } : {}),
    ...(include.has('description') ? { description: v.description } : {}),
    ...(include.has('configuration') ? { configuration: v.configuration } : {}),
    ...(include.has('rows') ? { rows: v.rows.map(rowResource) } : {}),
  };
}

/** Adds a version of the configuration as it is now. */
function addVersion(config: ConfigRecord, token: TokenRecord, changeDescription: string): void {
  const previous = config.versions.at(-1);
  config.versions.push({
    version: (previous?.version ?? 0) + 1,
    created: formatTimestamp(),
    creatorToken: creatorOf(token),
    changeDescription,
    versionIdentifier: versionIdentifier(),
    name: config.name,
    description: config.description,
    configuration: config.configuration,
    isDeleted: config.isDeleted,
    rows: config.rows.map((r) => ({ ...r })),
  });
}

/**
 * Configurations under `components/{componentId}/configs` (and `branch/{branch}/…`): list (`isDeleted`), create,
 * detail, update, delete, versions and version detail, rows (list, create, detail, update, delete); and
 * `components` (the components that have configurations, each with them). A master token may use every component;
 * another token the ones in its `componentAccess`.
 */
export function registerComponentRoutes(app: FastifyInstance, ctx: EmulatorContext): void {
  const branchIdOf = (request: FastifyRequest): number => {
    const branch = findBranch(ctx, branchOf(request));
    return branch === 'default' ? DEFAULT_BRANCH_ID : branch.id;
  };
  const authorize = (request: FastifyRequest, componentId: string): TokenRecord => {
    const token = tokenOf(request);
    if (!token.isMasterToken && !(token.componentAccess ?? []).includes(componentId)) {
      throw accessDenied(
        `configurations of ${componentId} need a master token or componentAccess to ${componentId}; token ${token.id} (${token.description}) has neither`,
      );
    }
    return token;
  };
  const all = (branchId: number): ConfigRecord[] =>
    ctx.state
      .all<ConfigRecord>(CONFIG)
      .filter((c) => c.branchId === branchId)
      .sort((a, b) => a.created.localeCompare(b.created) || a.id.localeCompare(b.id));
  const find = (request: FastifyRequest, options: { deleted?: boolean } = {}): { config: ConfigRecord; token: TokenRecord } => {
    const { componentId, configId } = request.params as { componentId: string; configId: string };
    const token = authorize(request, componentId);
    const config = ctx.state.get<ConfigRecord>(CONFIG, keyOf(branchIdOf(request), componentId, configId));
    if (!config || (config.isDeleted && !options.deleted)) throw notFound('storage.components.configurations.notFound', `Configuration ${configId} not found`);
    return { config, token };
  };
  const save = (config: ConfigRecord): void => ctx.state.put(CONFIG, keyOf(config.branchId, config.componentId, config.id), config);
  const findRow = (config: ConfigRecord, rowId: string): RowRecord => {
    const row = config.rows.find((r) => r.id === rowId);
    if (!row) throw notFound('storage.components.rows.notFound', `Row ${rowId} not found`);
    return row;
  };

  app.get('/components', async (request) => {
    tokenOf(request);
    const q = request.query as FormObject;
    const deleted = parseBool(q.isDeleted) ?? false;
    const include = new Set(String(q.include ?? '').split(','));
    const byComponent = new Map<string, ConfigRecord[]>();
    for (const config of all(branchIdOf(request)).filter((c) => c.isDeleted === deleted)) {
      byComponent.set(config.componentId, [...(byComponent.get(config.componentId) ?? []), config]);
    }
    const componentType = parseString(q.componentType);
    return [...byComponent.entries()]
      .filter(([id]) => componentType === undefined || componentInfo(id).type === componentType)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([id, configs]) => ({
        ...componentResource(ctx, id),
        configurations: configs.map((c) => {
          const { configuration, state, rows, ...rest } = configResource(c);
          return {
            ...rest,
            ...(include.has('configuration') ? { configuration } : {}),
            ...(include.has('state') ? { state } : {}),
            ...(include.has('rows') ? { rows } : {}),
          };
        }),
      }));
  });

  // A component the service has: one the emulator knows, or one the project has (had) configurations of.
  const requireComponent = (componentId: string): void => {
    if (KNOWN_COMPONENTS[componentId] || ctx.state.all<ConfigRecord>(CONFIG).some((c) => c.componentId === componentId)) return;
    throw notFound('storage.components.notFound', `Component "${componentId}" not found`);
  };

  app.get('/components/:componentId', async (request) => {
    const { componentId } = request.params as { componentId: string };
    tokenOf(request);
    requireComponent(componentId);
    return componentResource(ctx, componentId);
  });

  app.get('/components/:componentId/configs', async (request) => {
    const { componentId } = request.params as { componentId: string };
    authorize(request, componentId);
    requireComponent(componentId);
    const deleted = parseBool((request.query as FormObject).isDeleted) ?? false;
    return all(branchIdOf(request))
      .filter((c) => c.componentId === componentId && c.isDeleted === deleted)
      .map((c) => configResource(c));
  });

  app.post('/components/:componentId/configs', async (request, reply) => {
    const { componentId } = request.params as { componentId: string };
    const token = authorize(request, componentId);
    const params = await readParams(request);
    const name = parseString(params.name)?.trim() ?? '';
    if (!name) throw validation('name is required', 'storage.components.validation');
    const branchId = branchIdOf(request);
    const given = parseString(params.configurationId);
    if (given !== undefined && !ID.test(given))
      throw validation(`configurationId must be 1-128 letters, digits, ".", "_" or "-"; got ${JSON.stringify(given)}`, 'storage.components.validation');
    const id = given ?? String(ctx.nextId('config'));
    const existing = ctx.state.get<ConfigRecord>(CONFIG, keyOf(branchId, componentId, id));
    if (existing) throw new ApiError(400, 'storage.components.configurations.alreadyExists', `Configuration already exists: ${id}`);
    const config: ConfigRecord = {
      branchId,
      componentId,
      id,
      name,
      description: parseString(params.description) ?? '',
      created: formatTimestamp(),
      creatorToken: creatorOf(token),
      isDisabled: parseBool(params.isDisabled) ?? false,
      isDeleted: false,
      configuration: jsonParam(params.configuration, 'configuration') ?? {},
      state: jsonParam(params.state, 'state') ?? {},
      rows: [],
      rowsSortOrder: [],
      versions: [],
    };
    addVersion(config, token, parseString(params.changeDescription) ?? '');
    save(config);
    return reply.code(201).send(configResource(config, { rows: false }));
  });

  app.get('/components/:componentId/configs/:configId', async (request) => configResource(find(request).config));

  app.put('/components/:componentId/configs/:configId', async (request) => {
    const { config, token } = find(request);
    const params = await readParams(request);
    const name = parseString(params.name);
    if (name !== undefined && name.trim() === '') throw validation('name cannot be empty', 'storage.components.validation');
    const configuration = jsonParam(params.configuration, 'configuration');
    const state = jsonParam(params.state, 'state');
    const description = parseString(params.description);
    const isDisabled = params.isDisabled === undefined ? undefined : parseBool(params.isDisabled);
    const versioned = name !== undefined || description !== undefined || configuration !== undefined || isDisabled !== undefined;
    if (name !== undefined) config.name = name.trim();
    if (description !== undefined) config.description = description;
    if (configuration !== undefined) config.configuration = configuration;
    if (isDisabled !== undefined) config.isDisabled = isDisabled;
    if (state !== undefined) config.state = state;
    // A change of the state alone makes no version, like the service's.
    if (versioned) addVersion(config, token, parseString(params.changeDescription) ?? 'Configuration updated');
    save(config);
    return configResource(config);
  });

  app.delete('/components/:componentId/configs/:configId', async (request, reply) => {
    const { config, token } = find(request, { deleted: true });
    if (config.isDeleted) {
      if (config.branchId !== DEFAULT_BRANCH_ID)
        throw validation(`Configuration ${config.id} is deleted; a development branch's configuration cannot be purged`, 'storage.components.cannotPurge');
      ctx.state.delete(CONFIG, keyOf(config.branchId, config.componentId, config.id));
      for (const m of ctx.metadata.list('configuration', keyOf(config.branchId, config.componentId, config.id))) ctx.metadata.delete(m.id);
      return reply.code(204).send();
    }
    config.isDeleted = true;
    addVersion(config, token, 'Configuration deleted');
    save(config);
    return reply.code(204).send();
  });

  // The state alone: `PUT …/state {state}` (JSON) replaces it without a new version; the configuration answers.
  const stateOf = (params: FormObject): unknown => {
    const state = jsonParam(params.state, 'state');
    if (state === undefined || state === null || typeof state !== 'object' || Array.isArray(state)) {
      throw validation(
        `state is required: a JSON object, e.g. {"state": {"lastId": 123}}; got ${JSON.stringify(params.state ?? null)}`,
        'storage.components.validation',
      );
    }
    return state;
  };

  app.put('/components/:componentId/configs/:configId/state', async (request) => {
    const { config } = find(request);
    config.state = stateOf(await readParams(request));
    save(config);
    return configResource(config);
  });

  app.put('/components/:componentId/configs/:configId/rows/:rowId/state', async (request) => {
    const { config } = find(request);
    const row = findRow(config, (request.params as { rowId: string }).rowId);
    row.state = stateOf(await readParams(request));
    save(config);
    return rowResource(row);
  });

  app.get('/components/:componentId/configs/:configId/versions', async (request) => {
    const { config } = find(request);
    const q = request.query as FormObject;
    const include = new Set(String(q.include ?? 'name,description').split(','));
    const limit = parseIntParam(q.limit) ?? 100;
    const offset = parseIntParam(q.offset) ?? 0;
    return [...config.versions]
      .reverse()
      .slice(offset, offset + limit)
      .map((v) => versionResource(v, include));
  });

  app.get('/components/:componentId/configs/:configId/versions/:version', async (request) => {
    const { config } = find(request);
    const { version } = request.params as { version: string };
    const found = config.versions.find((v) => String(v.version) === version);
    if (!found) throw notFound('storage.components.configurations.versionNotFound', `Version ${version} not found`);
    return versionResource(found, new Set(['name', 'description', 'configuration', 'rows']));
  });

  app.get('/components/:componentId/configs/:configId/rows', async (request) => find(request).config.rows.map(rowResource));

  app.post('/components/:componentId/configs/:configId/rows', async (request, reply) => {
    const { config, token } = find(request);
    const params = await readParams(request);
    const given = parseString(params.rowId);
    if (given !== undefined && !ID.test(given))
      throw validation(`rowId must be 1-128 letters, digits, ".", "_" or "-"; got ${JSON.stringify(given)}`, 'storage.components.validation');
    const id = given ?? String(ctx.nextId('config'));
    if (config.rows.some((r) => r.id === id)) throw new ApiError(400, 'storage.components.rows.alreadyExists', `Row already exists: ${id}`);
    const changeDescription = parseString(params.changeDescription) ?? '';
    const row: RowRecord = {
      id,
      name: parseString(params.name) ?? '',
      description: parseString(params.description) ?? '',
      configuration: jsonParam(params.configuration, 'configuration') ?? {},
      // a row created without a state has none (null), as on the service; a configuration's is `{}`
      state: jsonParam(params.state, 'state') ?? null,
      isDisabled: parseBool(params.isDisabled) ?? false,
      version: 1,
      created: formatTimestamp(),
      creatorToken: creatorOf(token),
      changeDescription,
    };
    config.rows.push(row);
    addVersion(config, token, changeDescription || `Row ${id} added`);
    save(config);
    return reply.code(201).send(rowResource(row));
  });

  app.get('/components/:componentId/configs/:configId/rows/:rowId', async (request) => {
    const { config } = find(request);
    return rowResource(findRow(config, (request.params as { rowId: string }).rowId));
  });

  app.put('/components/:componentId/configs/:configId/rows/:rowId', async (request) => {
    const { config, token } = find(request);
    const row = findRow(config, (request.params as { rowId: string }).rowId);
    const params = await readParams(request);
    const configuration = jsonParam(params.configuration, 'configuration');
    const state = jsonParam(params.state, 'state');
    const name = parseString(params.name);
    const description = parseString(params.description);
    const isDisabled = params.isDisabled === undefined ? undefined : parseBool(params.isDisabled);
    if (configuration !== undefined) row.configuration = configuration;
    if (state !== undefined) row.state = state;
    if (name !== undefined) row.name = name;
    if (description !== undefined) row.description = description;
    if (isDisabled !== undefined) row.isDisabled = isDisabled;
    if (configuration !== undefined || name !== undefined || description !== undefined || isDisabled !== undefined) {
      const changeDescription = parseString(params.changeDescription) ?? '';
      row.version += 1;
      row.changeDescription = changeDescription;
      addVersion(config, token, changeDescription || `Row ${row.id} changed`);
    }
    save(config);
    return rowResource(row);
  });

  app.delete('/components/:componentId/configs/:configId/rows/:rowId', async (request, reply) => {
    const { config, token } = find(request);
    const row = findRow(config, (request.params as { rowId: string }).rowId);
    config.rows = config.rows.filter((r) => r !== row);
    config.rowsSortOrder = config.rowsSortOrder.filter((id) => id !== row.id);
    addVersion(config, token, parseString((request.query as FormObject).changeDescription) ?? `Row ${row.id} deleted`);
    save(config);
    return reply.code(204).send();
  });

  // Configuration metadata: `{key, value}` entries (provider `user`) per configuration; all of them answered on a change.
  const configMetadataId = (config: ConfigRecord): string => keyOf(config.branchId, config.componentId, config.id);
  const configMetadata = (config: ConfigRecord) => ctx.metadata.list('configuration', configMetadataId(config)).map(configMetadataResource);

  app.get('/components/:componentId/configs/:configId/metadata', async (request) => configMetadata(find(request).config));

  app.post('/components/:componentId/configs/:configId/metadata', async (request, reply) => {
    const { config } = find(request);
    const params = await readParams(request);
    const items = (listItems(params.metadata) ?? []).map((item, i) => {
      if (!item || typeof item !== 'object' || Array.isArray(item))
        throw validation(`metadata[${i}] must be an object {key, value}`, 'storage.metadata.validation');
      const f = item as FormObject;
      const key = parseString(f.key) ?? '';
      if (!METADATA_KEY.test(key))
        throw validation(
          `metadata[${i}].key must be 1-255 letters, digits, "_", "-", ":" or "."; got ${JSON.stringify(f.key ?? null)}`,
          'storage.metadata.validation',
        );
      if (f.value === undefined || f.value === null) throw validation(`metadata[${i}].value is required (key ${key})`, 'storage.metadata.validation');
      return { key, value: typeof f.value === 'string' ? f.value : JSON.stringify(f.value) };
    });
    if (!items.length) throw validation('metadata must list at least one {key, value}', 'storage.metadata.validation');
    ctx.metadata.upsert('configuration', configMetadataId(config), 'user', items);
    return reply.code(201).send(configMetadata(config));
  });

  app.delete('/components/:componentId/configs/:configId/metadata/:metadataId', async (request, reply) => {
    const { config } = find(request);
    const { metadataId } = request.params as { metadataId: string };
    const entry = ctx.metadata.get(metadataId);
    if (!entry || entry.objectType !== 'configuration' || entry.objectId !== configMetadataId(config)) {
      throw notFound('storage.metadata.notFound', `Metadata ${metadataId} not found on configuration ${config.id} of ${config.componentId}`);
    }
    ctx.metadata.delete(metadataId);
    return reply.code(204).send();
  });

  // `search/component-configurations`: the branch's configurations (not deleted) the token may use, filtered by
  // component, configuration and metadata keys (any of them set); `include=filteredMetadata` adds those entries.
  app.get('/search/component-configurations', async (request) => {
    // a branch-only route on the service: without `branch/{id}/` the path is unknown
    if ((request.params as { branchId?: string }).branchId === undefined) {
      throw notFound(
        'storage.routeNotFound',
        'route not found: GET /v2/storage/search/component-configurations (use /v2/storage/branch/{branchId}/search/component-configurations)',
      );
    }
    const token = tokenOf(request);
    const q = request.query as FormObject;
    const componentId = parseString(q.componentId);
    const configurationId = parseString(q.configurationId);
    const keys = parseList(q.metadataKeys) ?? [];
    const include = new Set(
      String(q.include ?? '')
        .split(',')
        .map((x) => x.trim()),
    );
    return all(branchIdOf(request))
      .filter((c) => !c.isDeleted && (token.isMasterToken || (token.componentAccess ?? []).includes(c.componentId)))
      .filter((c) => (componentId === undefined || c.componentId === componentId) && (configurationId === undefined || c.id === configurationId))
      .map((c) => ({ config: c, metadata: ctx.metadata.list('configuration', configMetadataId(c)).filter((m) => keys.includes(m.key)) }))
      .filter(({ metadata }) => !keys.length || metadata.length > 0)
      .map(({ config, metadata }) => ({
        idComponent: config.componentId,
        configurationId: config.id,
        ...(include.has('filteredMetadata') ? { metadata: metadata.map(configMetadataResource) } : {}),
      }));
  });
}

/** Keys of configuration metadata (as the other metadata's). */
const METADATA_KEY = /^[A-Za-z0-9_.:-]{1,255}$/;

/** A configuration's metadata entry as the service answers it: `{id, key, value, timestamp}`. */
function configMetadataResource(m: Parameters<typeof metadataResource>[0]): Record<string, unknown> {
  const { id, key, value, timestamp } = metadataResource(m) as { id: string; key: string; value: string; timestamp: string };
  return { id, key, value, timestamp };
}

/** The ids of the components that have configurations (in any branch), for the index's `components`. */
export function componentIds(ctx: EmulatorContext): string[] {
  return [...new Set(ctx.state.all<ConfigRecord>(CONFIG).map((c) => c.componentId))].sort();
}
