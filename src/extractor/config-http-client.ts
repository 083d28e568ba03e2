/**
 * The configuration keys of how requests are sent, and of the run as a whole, that `config-schema.ts` takes from
 * here: `api.retryConfig`, `api.http.{ignoreErrors, requiredHeaders, connectTimeout, requestTimeout}`,
 * `api.caCertificate`, `api.#clientCertificate`, `parameters.aws.signature`, `config.http.headers`,
 * `config.incrementalOutput`, and `parameters.sshProxy` (refused). Reference: keboola/generic-extractor
 * `Configuration/Api.php`, `Configuration/Headers.php`, juicer `Retry/RetryHandler.php`.
 *
 * NOT workflow-safe (zod values).
 */
import { z } from 'zod';
import type { ConfigIssue } from './errors';
import type { AwsSignatureConfig, HttpClientConfig, RetryConfig } from './types';

/** Refuses keys a block does not know (nothing is ignored silently), naming each. */
function onlyKeys<T extends z.ZodType>(schema: T, where: string, known: readonly string[]) {
  return schema.superRefine((value, ctx) => {
    if (typeof value !== 'object' || value === null) return;
    for (const key of Object.keys(value)) {
      if (!known.includes(key)) ctx.addIssue({ code: 'custom', path: [key], message: `'${where}.${key}' is not supported (known: ${known.join(', ')}).` });
    }
  });
}

/** The reference's retry defaults (juicer `RetryHandler`), used when `api.retryConfig` is given without them. */
const REFERENCE_RETRY_DEFAULTS = Object.freeze({
  maxRetries: 10,
  codes: [500, 502, 503, 504, 408, 420, 429] as readonly number[],
  retryHeader: 'Retry-After',
});

const statusCode = (what: string) =>
  z
    .number({ error: `'${what}' must list HTTP status codes (integers 100-599).` })
    .int({ error: `'${what}' must list HTTP status codes (integers 100-599).` })
    .min(100)
    .max(599);

const statusList = (what: string) => z.array(statusCode(what), { error: `'${what}' must be an array of HTTP status codes.` });

const NOT_SUPPORTED_CURL = 'is not supported: network errors (connection refused or reset, DNS, TLS, timeouts) are always retried; remove the key.';

/** `api.retryConfig` (juicer 9 shape, plus the juicer 8 `headerName`/`httpCodes` it converts). */
const retryConfigSchema = onlyKeys(
  z.looseObject(
    {
      maxRetries: z
        .union([z.number().int().nonnegative(), z.string().regex(/^\d+$/)], { error: "'retryConfig.maxRetries' must be a non-negative integer." })
        .optional(),
      http: onlyKeys(
        z.looseObject(
          {
            retryHeader: z.string({ error: "'retryConfig.http.retryHeader' must be a header name." }).min(1).optional(),
            codes: statusList('retryConfig.http.codes').optional(),
          },
          { error: "'retryConfig.http' must be an object with 'retryHeader' and 'codes'." },
        ),
        'retryConfig.http',
        ['retryHeader', 'codes'],
      ).optional(),
      headerName: z.string({ error: "'retryConfig.headerName' must be a header name." }).min(1).optional(),
      httpCodes: statusList('retryConfig.httpCodes').optional(),
      curl: z
        .unknown()
        .refine((v) => v === undefined, { error: `'retryConfig.curl' ${NOT_SUPPORTED_CURL}` })
        .optional(),
      curlCodes: z
        .unknown()
        .refine((v) => v === undefined, { error: `'retryConfig.curlCodes' ${NOT_SUPPORTED_CURL}` })
        .optional(),
    },
    { error: "'api.retryConfig' must be an object (maxRetries, http.retryHeader, http.codes)." },
  ),
  'retryConfig',
  ['maxRetries', 'http', 'headerName', 'httpCodes', 'curl', 'curlCodes'],
).optional();

const seconds = (what: string) =>
  z.union([z.number().positive(), z.string().regex(/^\d+(\.\d+)?$/)], { error: `'${what}' must be a positive number of seconds.` }).optional();

/** Keys added to `api.http`. */
export const apiHttpClientShape = {
  ignoreErrors: statusList('api.http.ignoreErrors').optional(),
  requiredHeaders: z.array(z.string().min(1), { error: "'api.http.requiredHeaders' must be an array of header names." }).optional(),
  connectTimeout: seconds('api.http.connectTimeout'),
  requestTimeout: seconds('api.http.requestTimeout'),
};

const pem = (what: string) =>
  z
    .string({ error: `'${what}' must be a PEM string.` })
    .min(1, { error: `'${what}' must be a PEM string.` })
    .optional();

/** Keys added to `api`. */
export const apiClientShape = {
  retryConfig: retryConfigSchema,
  caCertificate: pem('api.caCertificate'),
  '#clientCertificate': pem('api.#clientCertificate'),
};

const credential = (what: string) =>
  z
    .string({ error: `'aws.signature.credentials.${what}' must be a non-empty string.` })
    .min(1, { error: `'aws.signature.credentials.${what}' must be a non-empty string.` });

/** `parameters.aws`: `{signature: {credentials: {accessKeyId, #secretKey, serviceName, regionName}}}`. */
export const awsSchema = z
  .looseObject(
    {
      signature: z.looseObject(
        {
          credentials: onlyKeys(
            z.looseObject(
              {
                accessKeyId: credential('accessKeyId'),
                '#secretKey': credential('#secretKey'),
                serviceName: credential('serviceName'),
                regionName: credential('regionName'),
              },
              { error: "'aws.signature.credentials' must be an object (accessKeyId, #secretKey, serviceName, regionName)." },
            ),
            'aws.signature.credentials',
            ['accessKeyId', '#secretKey', 'serviceName', 'regionName'],
          ),
        },
        { error: "'aws.signature' must be an object with 'credentials'." },
      ),
    },
    { error: "'aws' must be an object with 'signature'." },
  )
  .optional();

/** `parameters.sshProxy`: refused (an SSH tunnel is not something a worker opens per configuration). */
export const sshProxySchema = z
  .unknown()
  .refine((v) => v === undefined || v === null, {
    error:
      "'sshProxy' (an SSH tunnel to the API) is not supported by this extractor: run the worker where it can reach the API directly (or through a VPN/proxy of its host) and remove 'sshProxy'.",
  })
  .optional();

/** Keys added to `config`. */
export const configRunShape = {
  incrementalOutput: z.boolean({ error: "'incrementalOutput' must be a boolean." }).nullish(),
  http: onlyKeys(
    z.looseObject(
      {
        // a value may also be a user function (evaluated per job run in workflow time, `functionHeaders`)
        headers: z
          .record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.looseObject({})]), {
            error: "'config.http.headers' must be an object of header names and values.",
          })
          .optional(),
      },
      { error: "'config.http' must be an object with 'headers'." },
    ),
    'config.http',
    ['headers'],
  ).nullish(),
};

type Raw = Record<string, unknown>;

const toMs = (v: unknown): number | null => (v === undefined || v === null ? null : Math.round(Number(v) * 1000));

function normalizeRetry(raw: Raw | undefined): RetryConfig | null {
  if (!raw) return null;
  const http = (raw.http as Raw | undefined) ?? {};
  return {
    maxRetries: raw.maxRetries === undefined ? REFERENCE_RETRY_DEFAULTS.maxRetries : Number(raw.maxRetries),
    codes: [...((http.codes ?? raw.httpCodes ?? REFERENCE_RETRY_DEFAULTS.codes) as number[])],
    retryHeader: (http.retryHeader ?? raw.headerName ?? REFERENCE_RETRY_DEFAULTS.retryHeader) as string,
  };
}

function normalizeAws(raw: Raw | undefined): AwsSignatureConfig | null {
  const c = ((raw?.signature as Raw | undefined)?.credentials as Raw | undefined) ?? undefined;
  if (!c) return null;
  return {
    accessKeyId: c.accessKeyId as string,
    secretKey: c['#secretKey'] as string,
    serviceName: c.serviceName as string,
    regionName: c.regionName as string,
  };
}

/** The normalized `HttpClientConfig` from the accepted `parameters` (after the schema). */
export function normalizeHttpClient(parameters: Raw): HttpClientConfig {
  const api = parameters.api as Raw;
  const http = (api.http as Raw | null | undefined) ?? {};
  return {
    retry: normalizeRetry(api.retryConfig as Raw | undefined),
    ignoreErrors: [...((http.ignoreErrors as number[] | undefined) ?? [])],
    connectTimeoutMs: toMs(http.connectTimeout),
    requestTimeoutMs: toMs(http.requestTimeout),
    caCertificate: (api.caCertificate as string | undefined) ?? null,
    clientCertificate: (api['#clientCertificate'] as string | undefined) ?? null,
    awsSignature: normalizeAws(parameters.aws as Raw | undefined),
  };
}

/** `config.http.headers` as strings (they replace `api.http.headers` of the same name, as in the reference). */
export function configHeaders(parameters: Raw): Record<string, string> {
  // function values are left to the user functions' `functionHeaders` (config-functions.ts), same precedence
  return Object.fromEntries(
    Object.entries(rawConfigHeaders(parameters))
      .filter(([, v]) => !isPlainObject(v))
      .map(([k, v]) => [k, String(v)]),
  );
}

function rawConfigHeaders(parameters: Raw): Raw {
  return (((parameters.config as Raw).http as Raw | null | undefined)?.headers as Raw | undefined) ?? {};
}

const isPlainObject = (v: unknown): v is Raw => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `api.http.requiredHeaders` must each be set, non-empty, in `config.http.headers` (reference wording). */
export function requiredHeaderIssues(parameters: Raw): ConfigIssue[] {
  const required = (((parameters.api as Raw).http as Raw | null | undefined)?.requiredHeaders as string[] | undefined) ?? [];
  const given = rawConfigHeaders(parameters);
  // a function value counts as set (it is evaluated later)
  return required
    .filter((name) => !isPlainObject(given[name]) && String(given[name] ?? '') === '')
    .map((name) => ({ path: 'parameters.config.http.headers', message: `Missing required header ${name} in 'config.http.headers'.` }));
}
