import { type FastifyInstance } from 'fastify';
import { type EmulatorContext } from '../context';

/** `GET /v2/storage` (service index, how clients find the importer) and `dev-branches`. */
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

  app.get('/dev-branches', async () => [{ id: 1, name: 'Main', isDefault: true, description: '', created: '2020-01-01T00:00:00+0000' }]);
}
