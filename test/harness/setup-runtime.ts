// Integration/chaos test files: keep the Temporal worker runtime quiet (errors only; expected failures in tests log warnings) so test output
// shows test results, not worker state changes. SAPI_TEST_LOG_LEVEL=DEBUG brings the full log back.
import { DefaultLogger, Runtime, type LogLevel } from '@temporalio/worker';

try {
  Runtime.install({ logger: new DefaultLogger((process.env.SAPI_TEST_LOG_LEVEL ?? 'ERROR') as LogLevel) });
} catch {
  /* already installed in this worker process */
}

// the AWS SDK's warning about future releases needing Node 22 (ours are pinned) would only clutter test output
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
