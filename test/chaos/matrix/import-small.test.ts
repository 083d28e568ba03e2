/**
 * The fault matrix for import-small: every cell of test/chaos/matrix/cells.ts for this operation (the subset by default,
 * all with SAPI_FAULT_MATRIX=full), each asserting the end state: rows equal by checksum, exactly one Storage job,
 * nothing left behind on failure, and the workflow's result.
 */
import { describeMatrix } from '../../harness/matrix/runner';

describeMatrix('import-small');
