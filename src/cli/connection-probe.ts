// The connection probe lives in src/config (the worker's start uses it too); the CLI's modules and tests import it from here.
export * from '../config/connection-probe';
