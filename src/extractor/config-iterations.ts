/**
 * `parameters.iterations` (config time, not workflow-safe): the reference (keboola/generic-extractor,
 * `Configuration\Extractor::getMultipleConfigs` and `Executor::run`) runs the whole configuration once per
 * iteration, in order, with `array_replace(parameters.config, iteration)`: each key of the iteration replaces the
 * `parameters.config` key of that name as a whole (a shallow merge: `http` replaces `config.http`, so its `headers`
 * replace the configuration's). So an iteration changes the config attributes (`{"attr": …}` in params, headers,
 * `userData`, the base URL), the credentials `basic` authentication reads (`username`, `#password`),
 * `config.http.headers`, and could change the jobs. Every iteration writes into the same tables.
 *
 * Ours normalizes every iteration as a whole configuration of its own (each must be valid on its own; the
 * configuration without iterations need not be). Refused, because the tables of all iterations are loaded once
 * with one setting: an iteration that changes `outputBucket`, `incrementalOutput`, `mappings` or `compatLevel` (the
 * reference keeps the last iteration's `incrementalOutput`, writes per `outputBucket` and shares one parser).
 */
import { ExtractorConfigError, type ConfigIssue } from './errors';
import type { ExtractorConfig } from './types';

type Raw = Record<string, unknown>;
const isObject = (v: unknown): v is Raw => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `parameters.config` keys an iteration may not set (they apply to the loading of all iterations' tables). */
const ITERATION_FIXED_KEYS = ['outputBucket', 'incrementalOutput', 'mappings', 'compatLevel'] as const;

/** The raw iterations of a configuration: `null` when it has none (absent, `null` or `[]`, as the reference's `empty()`). */
function rawIterations(json: unknown): unknown[] | null {
  const params = isObject(json) && isObject(json.parameters) ? json.parameters : undefined;
  const iterations = params?.iterations;
  if (iterations === undefined || iterations === null || (Array.isArray(iterations) && iterations.length === 0)) return null;
  if (!Array.isArray(iterations)) {
    throw new ExtractorConfigError([
      {
        path: 'parameters.iterations',
        message: "'iterations' must be an array of objects, each merged over 'parameters.config' for one run of the configuration.",
      },
    ]);
  }
  return iterations;
}

/**
 * Parses a configuration with `parameters.iterations` (else returns `null`): every iteration merged over
 * `parameters.config` and parsed with `parse`; the result is the first iteration's configuration with all of them in
 * `iterations` (in order). Issues name the iteration (`parameters.iterations[1]`).
 */
export function parseIterations(json: unknown, parse: (json: unknown) => ExtractorConfig): ExtractorConfig | null {
  const iterations = rawIterations(json);
  if (!iterations) return null;
  const root = json as Raw;
  const params = root.parameters as Raw;
  const base = isObject(params.config) ? params.config : undefined;
  const issues: ConfigIssue[] = [];
  const configs: ExtractorConfig[] = [];
  iterations.forEach((iteration, i) => {
    const path = `parameters.iterations[${i}]`;
    if (!isObject(iteration)) {
      issues.push({ path, message: 'an iteration must be an object of \'parameters.config\' keys, e.g. {"accountId": 345}.' });
      return;
    }
    for (const key of ITERATION_FIXED_KEYS) {
      if (key in iteration && JSON.stringify(iteration[key]) !== JSON.stringify(base?.[key])) {
        issues.push({
          path: `${path}.${key}`,
          message: `an iteration may not change '${key}': the tables of all iterations are loaded together; set it in 'parameters.config'.`,
        });
      }
    }
    const { iterations: _iterations, ...rest } = params;
    try {
      configs.push(parse({ ...root, parameters: { ...rest, config: base === undefined ? base : { ...base, ...iteration } } }));
    } catch (err) {
      if (!(err instanceof ExtractorConfigError)) throw err;
      for (const issue of err.issues) {
        // an issue outside `parameters.config` is the same in every iteration: named once, as is
        const named = issue.path.startsWith('parameters.config')
          ? { path: issue.path, message: `${issue.message} (in ${path}, merged over 'parameters.config')` }
          : issue;
        if (!issues.some((known) => known.path === named.path && known.message === named.message)) issues.push(named);
      }
    }
  });
  if (issues.length > 0) throw new ExtractorConfigError(issues);
  return { ...configs[0]!, iterations: configs };
}

/** The configurations an extraction runs, in order: each iteration's, or the configuration itself. */
export function iterationConfigs(config: ExtractorConfig): readonly ExtractorConfig[] {
  return config.iterations && config.iterations.length > 0 ? config.iterations : [config];
}
