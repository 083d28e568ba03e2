import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { IDENTIFYING_SEARCH_ATTRIBUTES, registerCommand, SAPI_SEARCH_ATTRIBUTES } from '../contracts/search-attributes';
import type { ActivityDeps } from './deps';

export interface RegisteredSearchAttributesResult {
  /**
   * The plugin's search attributes registered in the run's namespace, less the identifying ones when the worker
   * encrypts payloads: the workflow upserts only these.
   */
  registered: string[];
}

/** How long a namespace's answer is reused (ms): an attribute registered meanwhile is used within a minute. */
const REGISTERED_ATTRIBUTES_TTL_MS = 60_000;

const cache = new Map<string, { at: number; names: Promise<string[]> }>();
/** Namespaces this process warned about (one warning per namespace and missing set). */
const warned = new Set<string>();

/**
 * Which of the plugin's search attributes the run's namespace has registered. A workflow that upserted an
 * unregistered attribute would fail its workflow task over and over, so the workflows ask this (a local activity,
 * one marker event) first and upsert only what is registered. Asked through the operator service
 * (`ListSearchAttributes`); where that is refused (Temporal Cloud with an API key), a visibility count that names
 * every attribute decides all or none. A namespace missing some logs one warning per worker process, with the
 * command that registers them; the run goes on unsearchable by them.
 */
export function registeredSearchAttributes(deps?: ActivityDeps) {
  // with payload encryption on, the identifying ones are left unset: their values would be indexed in clear
  const usable = (names: string[]) => (deps?.settings.codecKeys ? names.filter((name) => !IDENTIFYING_SEARCH_ATTRIBUTES.includes(name)) : names);
  return async (): Promise<RegisteredSearchAttributesResult> => {
    const context = Context.current();
    const namespace = context.info.namespace;
    const now = Date.now();
    let entry = cache.get(namespace);
    if (!entry || now - entry.at > REGISTERED_ATTRIBUTES_TTL_MS) {
      entry = { at: now, names: lookUp(context.client, namespace) };
      cache.set(namespace, entry);
      entry.names.catch(() => cache.delete(namespace));
    }
    const registered = await entry.names;
    const missing = SAPI_SEARCH_ATTRIBUTES.map((k) => k.name).filter((name) => !registered.includes(name));
    const warning = `${namespace}:${missing.join(',')}`;
    if (missing.length && !warned.has(warning)) {
      warned.add(warning);
      context.log.warn(
        `search attributes ${missing.join(', ')} are not registered in namespace ${namespace}: runs go on, but cannot be found by them ` +
          `(sapi-temporal list, temporal workflow list --query). Register them with: ${registerCommand(namespace, missing)}`,
      );
    }
    return { registered: usable(registered) };
  };
}

async function lookUp(client: Client, namespace: string): Promise<string[]> {
  const ours = SAPI_SEARCH_ATTRIBUTES.map((k) => k.name);
  try {
    const answer = await client.connection.operatorService.listSearchAttributes({ namespace });
    const known = new Set(Object.keys(answer.customAttributes ?? {}));
    return ours.filter((name) => known.has(name));
  } catch {
    // no operator service for us: a query naming an unregistered attribute is refused, so one count decides
    try {
      await client.workflow.count(ours.map((name) => `${name} IS NULL`).join(' AND '));
      return ours;
    } catch {
      return [];
    }
  }
}
