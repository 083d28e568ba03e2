import Fastify from 'fastify';
import { DEFAULT_PRESIGN_TTL_SECONDS } from '../../../src/emulator';
import { MEMORY_OBJECTS_PREFIX, MEMORY_STORE_UNSUPPORTED, MemoryObjectStore, registerMemoryObjectRoutes } from '../../../src/emulator/memory-store';
import { objectStoreContract } from '../../harness/object-store-contract';

// The memory store's presigned URLs are served by the emulator's own route: the same route on a server of its own.
objectStoreContract(
  'memory',
  async () => {
    let url = '';
    const store = new MemoryObjectStore(() => url, DEFAULT_PRESIGN_TTL_SECONDS);
    const app = Fastify({ logger: false, forceCloseConnections: true });
    await app.register(async (scope) => registerMemoryObjectRoutes(scope, store), { prefix: MEMORY_OBJECTS_PREFIX });
    url = await app.listen({ port: 0, host: '127.0.0.1' });
    return { store, stop: () => app.close() };
  },
  { refused: MEMORY_STORE_UNSUPPORTED },
);
