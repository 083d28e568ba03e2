/**
 * One backend end to end per change, the full three-backend sweep behind its own target. `make test` runs each
 * behaviour on one object-storage backend; the repeats on the other backends (Azure and GCS where S3 already covers
 * the behaviour; MinIO and fake-gcs-server where the default Azurite demo does) run in `make test-backends`, which sets
 * `SAPI_TEST_BACKENDS=all`. What moved is listed in docs/development.md#the-backend-sweep.
 */
import type { DevBackend } from '../../src/dev/stack';

/** True in `make test-backends` (`SAPI_TEST_BACKENDS=all`): the repeats on every backend run. */
export const backendSweep = process.env.SAPI_TEST_BACKENDS === 'all';

/** `describe` in the sweep, `describe.skip` in `make test`: a suite that only repeats on another backend what one covers. */
export const describeInSweep: jest.Describe = backendSweep ? describe : describe.skip;

/** The backends a per-backend suite runs on: `first` in `make test`, all three in the sweep. */
export function sweptBackends(first: DevBackend): DevBackend[] {
  return backendSweep ? ['aws', 'azure', 'gcp'] : [first];
}
