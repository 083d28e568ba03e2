import { DefaultLogger, type LogEntry, type LogLevel, type Logger } from '@temporalio/worker';
import { DEFAULT_LOG_FORMAT, type LogFormat } from './log-format';

export { DEFAULT_LOG_FORMAT, LOG_FORMATS, type LogFormat } from './log-format';

/**
 * One log entry as one line of JSON: `time` (ISO 8601, from the SDK's nanosecond timestamp), `level`, `message`,
 * then the SDK's metadata flat (`workflowId`, `runId`, `workflowType`, `activityId`, `activityType`, `taskQueue`,
 * `namespace`, `attempt`, `sdkComponent`, …). Errors become `{name, message, code?, type?, stack}`; bigints
 * strings; cycles `"[Circular]"`. Metadata never overrides `time`, `level` or `message`.
 */
export function formatJsonLogLine(entry: LogEntry): string {
  const time = new Date(Number(entry.timestampNanos / 1_000_000n)).toISOString();
  const record = { ...(entry.meta ?? {}), time, level: entry.level, message: entry.message };
  const seen = new WeakSet<object>();
  return `${JSON.stringify(record, (_key, value: unknown) => {
    if (typeof value === 'bigint') return value.toString();
    if (value instanceof Error) {
      const { code, type } = value as Error & { code?: unknown; type?: unknown };
      return { name: value.name, message: value.message, ...(code !== undefined ? { code } : {}), ...(type !== undefined ? { type } : {}), stack: value.stack };
    }
    if (value && typeof value === 'object') {
      if (seen.has(value)) return '[Circular]';
      seen.add(value);
    }
    return value;
  })}\n`;
}

/**
 * The worker runtime's logger: the SDK's `DefaultLogger` (`@temporalio/worker`) at `level`, writing multi-line text to stderr
 * (`text`) or one JSON object a line (`json`, see {@link formatJsonLogLine}) to `write` (default stderr).
 */
export function createWorkerLogger(
  level: LogLevel,
  format: LogFormat = DEFAULT_LOG_FORMAT,
  write: (line: string) => void = (line) => process.stderr.write(line),
): Logger {
  return withBundlerStatsAtDebug(format === 'text' ? new DefaultLogger(level) : new DefaultLogger(level, (entry) => write(formatJsonLogLine(entry))));
}

/** webpack's stats as the SDK's bundler logs them at INFO (`asset workflow-bundle-….js 2.64 MiB …`, 20 lines). */
const BUNDLER_STATS = /^asset workflow-bundle-[\s\S]*\bwebpack [\d.]+ compiled/;

/**
 * `logger` with the SDK bundler's webpack stats moved from INFO to DEBUG: a worker that bundles its workflows at
 * start would print them at every start (its one INFO line `Workflow bundle created` stays).
 */
export function withBundlerStatsAtDebug(logger: Logger): Logger {
  return loggerOf((level, message, meta) => logger.log(level === 'INFO' && BUNDLER_STATS.test(message) ? 'DEBUG' : level, message, meta));
}

/** A {@link Logger} whose every level goes through `log`. */
export function loggerOf(log: (level: LogLevel, message: string, meta?: Record<string, unknown>) => void): Logger {
  return {
    log,
    trace: (message, meta) => log('TRACE', message, meta),
    debug: (message, meta) => log('DEBUG', message, meta),
    info: (message, meta) => log('INFO', message, meta),
    warn: (message, meta) => log('WARN', message, meta),
    error: (message, meta) => log('ERROR', message, meta),
  };
}
