/**
 * Components the emulator knows by id, with the `type` and `name` the service lists them under. The emulator runs
 * none of them; it keeps configurations of these and of any other id a client writes. A component is known when it
 * is listed here or has (or had) configurations in the project: `GET components/{id}` and the list of its
 * configurations answer 404 `storage.components.notFound` for any other, as the service does for an id it has not.
 */
import { type EmulatorContext } from './context';

export interface KnownComponent {
  type: 'extractor' | 'writer' | 'application' | 'transformation' | 'other';
  name: string;
}

/** The components of a stack that clients of this project (and the official clients' tests) use. */
export const KNOWN_COMPONENTS: Readonly<Record<string, KnownComponent>> = {
  'ex-generic-v2': { type: 'extractor', name: 'Generic' },
  'keboola.ex-http': { type: 'extractor', name: 'HTTP' },
  'keboola.ex-db-mysql': { type: 'extractor', name: 'MySQL' },
  'keboola.ex-db-pgsql': { type: 'extractor', name: 'PostgreSQL' },
  'keboola.ex-db-snowflake': { type: 'extractor', name: 'Snowflake' },
  'keboola.ex-google-drive': { type: 'extractor', name: 'Google Drive' },
  'keboola.wr-db-snowflake': { type: 'writer', name: 'Snowflake' },
  'keboola.wr-google-drive': { type: 'writer', name: 'Google Drive' },
  'keboola.snowflake-transformation': { type: 'transformation', name: 'Snowflake SQL' },
  'keboola.python-transformation-v2': { type: 'transformation', name: 'Python' },
  'keboola.app-tree': { type: 'application', name: 'Tree depth' },
  'keboola.orchestrator': { type: 'other', name: 'Orchestrator' },
  'keboola.sandboxes': { type: 'other', name: 'Workspace' },
  'keboola.variables': { type: 'other', name: 'Variables' },
  'keboola.shared-code': { type: 'other', name: 'Shared Code' },
  orchestration: { type: 'other', name: 'Orchestrator' },
  transformation: { type: 'transformation', name: 'Transformations' },
};

/** `type` and `name` of a component: its own when known, else `other` and the id. */
export function componentInfo(id: string): KnownComponent {
  return KNOWN_COMPONENTS[id] ?? { type: 'other', name: id };
}

/** A component as the service lists it (without its configurations): `id`, `type`, `name`, `description`, `uri`. */
export function componentResource(ctx: EmulatorContext, id: string): Record<string, unknown> {
  const { type, name } = componentInfo(id);
  return { id, type, name, description: '', uri: `${ctx.baseUrl}/v2/storage/components/${id}`, flags: [], configurationSchema: {}, data: {} };
}
