import { type DocLog } from './doc-log';
import { type EventLog } from './events';
import { type MetadataStore } from './metadata';
import { type Faults } from './faults';
import { type JobRunner } from './jobs/job-runner';
import { type ObjectStore } from './object-store';
import { type EmulatorTableBackend } from './options';
import { type TableStore } from './table-store';
import { type TokenStore } from './tokens';

/** Everything the routes and jobs share; built once by `createEmulator`. */
export interface EmulatorContext {
  /** Base URL, known once the server listens. */
  baseUrl: string;
  importUrl: string;
  projectId: number;
  /** Table backend the emulator answers as. */
  tableBackend: EmulatorTableBackend;
  /** Region of the stack: on file resources and the project (`owner.region`). */
  region: string;
  sliceSizeBytes: number;
  /** Every table export is sliced and headerless (a Snowflake stack's), not only one larger than a slice. */
  slicedExports: boolean;
  /** Most columns a table may have. */
  maxTableColumns: number;
  tmpDir: string;
  objects: ObjectStore;
  state: DocLog;
  tables: TableStore;
  jobs: JobRunner;
  faults: Faults;
  tokens: TokenStore;
  metadata: MetadataStore;
  events: EventLog;
  nextId(kind: IdKind): number;
}

/** Kinds of numbered records, each with its own sequence kept in the state log. */
export type IdKind = 'file' | 'job' | 'metadata' | 'event' | 'branch' | 'config' | 'trigger' | 'snapshot';
