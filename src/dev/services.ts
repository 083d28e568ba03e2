import { type DevStackService } from './stack';

export interface DevServicesOptions {
  /** Run a worker for the plugin inside the stack. */
  worker?: boolean;
}

/** The services the dev stack runs on top of Temporal and MinIO: the Storage API emulator, then a worker. */
export function devServices(_options: DevServicesOptions = {}): DevStackService[] {
  return [];
}
