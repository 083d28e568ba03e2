// Integration/chaos test files: keep the Temporal worker runtime quiet (warnings and errors only) so test output
// shows test results, not worker state changes. SAPI_TEST_LOG_LEVEL=DEBUG brings the full log back.
import { DefaultLogger, Runtime, type LogLevel } from '@temporalio/worker';

try {
  Runtime.install({ logger: new DefaultLogger((process.env.SAPI_TEST_LOG_LEVEL ?? 'WARN') as LogLevel) });
} catch {
  /* already installed in this worker process */
}
