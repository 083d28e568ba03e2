/**
 * The Generic-Extractor configuration: zod schema (structure and every rule, with the reference's wording where it
 * has one) and `parseExtractorConfig`, which returns the normalized, frozen `ExtractorConfig`. The sections have
 * their own modules: `scroller-schema.ts` (pagination), `job-schema.ts` (jobs), `auth/schema.ts` (authentication),
 * `config-http-client.ts` (how requests are sent), `config-functions.ts` (user functions), `mapping-config.ts`
 * (mappings, userData, recursionFilter), `config-iterations.ts` (iterations).
 *
 * NOT workflow-safe (zod values): used by activities and the CLI. Workflows `import type` from `./types`.
 */
import { z } from 'zod';
import { normalizeAuthentication, authenticationSchema } from './auth/schema';
import { attributesOf, evaluateBaseUrl, functionHeadersOf, functionPlacementIssues } from './config-functions';
import { emptyToUndefined, isObject, paramsSchema, type Raw } from './config-values';
import { ExtractorConfigError, type ConfigIssue } from './errors';
import { compatLevelSchema, jobSchema, normalizeJob } from './job-schema';
import { applyJobFeatures } from './mapping-config';
import { normalizePagination, paginationSchema } from './scroller-schema';
import { safeName } from './table-names';
import type { ApiConfig, ExtractorConfig, JobConfig, JsonObject } from './types';
import { isHttpUrl } from './url';
import { unknownKeyIssues } from './known-keys';
import { parseIterations } from './config-iterations';
import {
  apiClientShape,
  apiHttpClientShape,
  awsSchema,
  configHeaders,
  configRunShape,
  normalizeHttpClient,
  requiredHeaderIssues,
  sshProxySchema,
} from './config-http-client';

export { jobSchema } from './job-schema';
export { SUPPORTED_PAGINATION_METHODS, UNSUPPORTED_PAGINATION_METHODS } from './scroller-schema';

const headersSchema = z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.looseObject({})]), {
  error: "'http.headers' must be an object of header names and values.",
});

/** The whole configuration file: `{parameters: {api, config}}`. Unknown keys are allowed (and ignored). */
const extractorConfigInputSchema = z.looseObject({
  parameters: z.looseObject(
    {
      api: z.looseObject(
        {
          baseUrl: z.union(
            [
              z
                .string({ error: "The 'baseUrl' attribute must be set in API configuration" })
                .min(1, { error: "The 'baseUrl' attribute must be set in API configuration", abort: true })
                .refine(isHttpUrl, { error: "The 'baseUrl' attribute in API configuration is not a valid URL" }),
              // user functions: a function object, evaluated in normalization
              z.looseObject({ function: z.unknown() }),
            ],
            {
              error: (iss) =>
                typeof iss.input === 'string' && iss.input !== ''
                  ? "The 'baseUrl' attribute in API configuration is not a valid URL"
                  : "The 'baseUrl' attribute must be set in API configuration",
            },
          ),
          // user functions and authentication
          authentication: z.preprocess(emptyToUndefined, authenticationSchema.optional()),
          pagination: z.preprocess(emptyToUndefined, paginationSchema.optional()),
          http: z
            .looseObject(
              {
                headers: z.preprocess(emptyToUndefined, headersSchema.optional()),
                defaultOptions: z
                  .looseObject(
                    {
                      params: z.preprocess(emptyToUndefined, paramsSchema('http.defaultOptions.params').optional()),
                      headers: z.preprocess(emptyToUndefined, headersSchema.optional()),
                    },
                    { error: "'http.defaultOptions' must be an object." },
                  )
                  .nullish(),
                ...apiHttpClientShape,
              },
              { error: "'api.http' must be an object." },
            )
            .nullish(),
          ...apiClientShape,
        },
        { error: "The 'api' section is required in configuration." },
      ),
      config: z.looseObject(
        {
          outputBucket: z.string({ error: "'outputBucket' must be a string." }).nullish(),
          compatLevel: compatLevelSchema, // the reference JSON parser's behaviour to match (1-3)
          debug: z.boolean({ error: "'debug' must be a boolean." }).nullish(),
          jobs: z
            .array(jobSchema, { error: "The 'jobs' section is required in the configuration." })
            .min(1, { error: "The 'jobs' section is required in the configuration." }),
          ...configRunShape,
        },
        { error: "The 'config' section is required in the configuration." },
      ),
      aws: awsSchema,
      sshProxy: sshProxySchema,
    },
    { error: "The 'parameters' section is required in the configuration." },
  ),
});

/** Formats a zod path as `parameters.config.jobs[0].endpoint`. */
function formatPath(path: ReadonlyArray<PropertyKey>): string {
  return path.reduce<string>((acc, seg) => {
    if (typeof seg === 'number') return `${acc}[${seg}]`;
    return acc === '' ? String(seg) : `${acc}.${String(seg)}`;
  }, '');
}

// ---------------------------------------------------------------------------------------------------------------
// Normalization (after the schema accepted the input).

function stringHeaders(raw: unknown): Record<string, string> {
  return Object.fromEntries(
    Object.entries((raw as Raw | undefined) ?? {})
      .filter(([, v]) => !isObject(v))
      .map(([k, v]) => [k, String(v)]),
  );
}

/** Rules that need the whole configuration: scroller names and table names. */
function crossChecks(config: ExtractorConfig): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const pagination = config.api.pagination;
  const visit = (job: JobConfig, path: string) => {
    if (pagination.method === 'multiple' && job.scroller !== null && !(job.scroller in pagination.scrollers)) {
      issues.push({
        path: `${path}.scroller`,
        message: `Scroller '${job.scroller}' not set in API definitions. Scrollers defined: ${Object.keys(pagination.scrollers).join(', ')}`,
      });
    }
    if (safeName(job.dataType) === '') {
      issues.push({
        path: `${path}.dataType`,
        message: `The table name made from '${job.dataType}' is empty: set 'dataType' to a name with letters or digits.`,
      });
    }
    job.children.forEach((child, i) => visit(child, `${path}.children[${i}]`));
  };
  config.config.jobs.forEach((job, i) => visit(job, `parameters.config.jobs[${i}]`));
  return issues;
}

/**
 * Validates a Generic-Extractor configuration (the parsed JSON of the file) and returns it normalized and frozen.
 * Throws `ExtractorConfigError` (code `SAPI_EXTRACT_CONFIG_INVALID`) listing every issue with its path, before
 * any request is sent.
 */
export function parseExtractorConfig(json: unknown): ExtractorConfig {
  // `parameters.iterations`: every iteration parsed as a configuration of its own
  const iterated = parseIterations(json, parseExtractorConfig);
  if (iterated) return deepFreeze(iterated);
  const parsed = extractorConfigInputSchema.safeParse(json);
  if (!parsed.success) {
    throw new ExtractorConfigError(parsed.error.issues.map((i) => ({ path: formatPath(i.path), message: i.message })));
  }
  // a key this extractor does not read would be ignored silently: refused, named (known-keys.ts)
  const unknownKeys = unknownKeyIssues(json);
  if (unknownKeys.length > 0) throw new ExtractorConfigError(unknownKeys);
  const params = parsed.data.parameters as Raw;
  const apiRaw = params.api as Raw;
  const http = (apiRaw.http as Raw | null | undefined) ?? {};
  const defaults = (http.defaultOptions as Raw | null | undefined) ?? {};
  const configRaw = params.config as Raw;
  // user functions and authentication
  const attributes = attributesOf(configRaw);
  const configHttp = isObject(configRaw.http) ? configRaw.http : {};
  const fnIssues: ConfigIssue[] = [];
  // same precedence as the plain headers: config.http.headers replace api.http.headers, defaultOptions.headers win
  const functionHeaders = functionHeadersOf(http.headers, configHttp.headers, defaults.headers);
  const authentication = normalizeAuthentication(apiRaw.authentication, attributes, (json as Raw).authorization, fnIssues);
  const api: ApiConfig = {
    baseUrl: evaluateBaseUrl(apiRaw.baseUrl, attributes, fnIssues),
    pagination: normalizePagination(apiRaw.pagination as Raw | undefined),
    http: {
      // config.http.headers replace api.http.headers (reference Headers::getHeaders); defaultOptions.headers win
      headers: { ...stringHeaders(http.headers), ...configHeaders(params), ...stringHeaders(defaults.headers) },
      defaultParams: (defaults.params as JsonObject | undefined) ?? {},
      ...(Object.keys(functionHeaders).length > 0 ? { functionHeaders } : {}),
    },
    client: normalizeHttpClient(params),
    ...(authentication ? { authentication } : {}),
  };
  const config: ExtractorConfig = {
    api,
    config: {
      outputBucket: (configRaw.outputBucket as string | null | undefined) || null,
      debug: configRaw.debug === true,
      compatLevel: (configRaw.compatLevel as number | undefined) ?? 3, // the reference JSON parser's latest behaviour
      jobs: (configRaw.jobs as Raw[]).map((job, i) => normalizeJob(job, String(i), (configRaw.compatLevel as number | undefined) ?? 3)),
      incrementalOutput: configRaw.incrementalOutput === true,
      attributes, // the `attr` context of user functions
    },
  };
  functionPlacementIssues(config, fnIssues);
  const issues = [...fnIssues, ...crossChecks(config), ...requiredHeaderIssues(params)];
  // mappings, userData, recursionFilter (mapping-config.ts)
  const features = applyJobFeatures(configRaw, config);
  issues.push(...features.issues);
  if (issues.length > 0) throw new ExtractorConfigError(issues);
  return deepFreeze(features.config);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value as object)) deepFreeze(child);
  }
  return value;
}
