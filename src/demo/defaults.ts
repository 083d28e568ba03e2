import type { DevBackend } from '../dev/stack';

/**
 * The demo's default backend: `azure`, the emulator's files in Azurite (Microsoft's emulator, installed from npm in
 * seconds); `aws` needs MinIO, which no package registry ships as a binary and whose build takes minutes.
 */
export const DEFAULT_DEMO_BACKEND: DevBackend = 'azure';
