import { type FastifyInstance } from 'fastify';
import { componentInfo } from '../component-registry';
import { type EmulatorContext } from '../context';
import { ApiError } from '../errors';
import { componentIds } from './component-routes';

/**
 * Services of a real stack as its index lists them (`GET /v2/storage`), in the same order. Only `import` is served by
 * the emulator; the others point at `<base>/services/<id>`, which answers 501 so a client fails with a clear message
 * instead of reaching some other host.
 */
export const STACK_SERVICES = [
  'docker-runner',
  'import',
  'oauth',
  'encryption',
  'billing',
  'scheduler',
  'sync-actions',
  'queue',
  'sandboxes',
  'data-science',
  'notification',
  'templates',
  'vault',
  'stream',
] as const;

/** Path prefix of the services the emulator lists but does not serve. */
export const UNSERVED_SERVICES_PREFIX = '/services';

/**
 * Stack features the emulator implements, as the index's `features` names them: typed tables (`native-types`,
 * `tables-definition`) and development branches that can be created (`dev-branches`).
 */
export const STACK_FEATURES = ['native-types', 'tables-definition', 'dev-branches'] as const;

/** The URL of a service in the index: the importer's own prefix, `<base>/services/<id>` for the others. */
export function serviceUrl(ctx: EmulatorContext, id: string): string {
  return id === 'import' ? ctx.importUrl : `${ctx.baseUrl}${UNSERVED_SERVICES_PREFIX}/${id}`;
}

/**
 * `GET /v2/storage`: the service index, answered without a token like the real service's (clients read it before
 * they have one, to find the importer and the other services). `?exclude=components` leaves out `components`.
 */
export function registerServiceRoutes(app: FastifyInstance, ctx: EmulatorContext): void {
  app.get('/', async (request) => {
    const exclude = String((request.query as { exclude?: unknown }).exclude ?? '')
      .split(',')
      .map((s) => s.trim());
    const index: Record<string, unknown> = {
      host: new URL(ctx.baseUrl).host,
      api: 'storage',
      version: 'v2',
      revision: 'sapi-temporal-emulator',
      documentation: 'https://keboola.docs.apiary.io/',
      // The components the project has configurations of (the emulator knows no others).
      components: componentIds(ctx).map((id) => ({
        id,
        type: componentInfo(id).type,
        name: componentInfo(id).name,
        uri: `${ctx.baseUrl}/v2/storage/components/${id}`,
      })),
      services: STACK_SERVICES.map((id) => ({ id, url: serviceUrl(ctx, id) })),
      features: [...STACK_FEATURES],
      urlTemplates: {
        orchestrationJob: '/admin/projects/{projectId}/orchestrations/{orchestrationId}/jobs/{jobId}',
      },
      // Not in a stack's index: how this emulator answers where stacks differ (clients ignore fields they do not know).
      emulator: {
        tableBackend: ctx.tableBackend,
        fileStorageProvider: ctx.objects.provider,
        region: ctx.region,
        slicedExports: ctx.slicedExports,
        exportSliceSizeBytes: ctx.sliceSizeBytes,
      },
    };
    if (exclude.includes('components')) delete index.components;
    return index;
  });
}

/** `<base>/services/<id>/*`: the stack services the emulator lists but does not serve answer 501, naming the service. */
export function registerUnservedServiceRoutes(app: FastifyInstance): void {
  const notServed = async (request: { params: unknown; method: string; url: string }): Promise<never> => {
    const { serviceId } = request.params as { serviceId: string };
    throw new ApiError(
      501,
      'emulator.serviceNotServed',
      `the ${serviceId} service is listed in the index but not served by the emulator (it serves only Storage and import): ${request.method} ${request.url.split('?')[0]}`,
    );
  };
  app.all('/:serviceId', notServed);
  app.all('/:serviceId/*', notServed);
}
