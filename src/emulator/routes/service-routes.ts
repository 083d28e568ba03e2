import { type FastifyInstance } from 'fastify';
import { type EmulatorContext } from '../context';
import { tokenOf } from '../http';

/** `GET /v2/storage` (service index, how clients find the importer), `tokens/verify`, `dev-branches`. */
export function registerServiceRoutes(app: FastifyInstance, ctx: EmulatorContext): void {
  app.get('/', async () => ({
    api: 'storage',
    version: 'v2',
    documentation: 'https://keboola.docs.apiary.io/',
    services: [{ id: 'import', url: ctx.importUrl }],
    components: [],
    features: [],
    urlTemplates: {},
  }));

  app.get('/tokens/verify', async (request) => {
    const token = tokenOf(request);
    return {
      id: token.id,
      description: token.description,
      created: '2020-01-01T00:00:00+0000',
      isMasterToken: true,
      canManageBuckets: true,
      canManageTokens: true,
      canReadAllFileUploads: true,
      canPurgeTrash: false,
      isDisabled: false,
      expires: null,
      bucketPermissions: {},
      owner: {
        id: ctx.projectId,
        name: 'Storage API emulator',
        region: ctx.objects.region,
        fileStorageProvider: 'aws',
        defaultBackend: 'duckdb',
        hasSnowflake: false,
        features: [],
      },
    };
  });

  app.get('/dev-branches', async () => [{ id: 1, name: 'Main', isDefault: true, description: '', created: '2020-01-01T00:00:00+0000' }]);
}
