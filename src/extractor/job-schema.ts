/**
 * One job of `config.jobs` (and its `children`): endpoint, method, params, `dataField`, `placeholders` (with user
 * functions), `responseFilter` and the `compatLevel` that picks the JSON parser; and its normalization into
 * `JobConfig`.
 *
 * NOT workflow-safe (zod values).
 */
import { z } from 'zod';
import { emptyToUndefined, isObject, methodSchema, paramsSchema, phpType, type Raw } from './config-values';
import { DEFAULT_RESPONSE_FILTER_DELIMITER } from './response-filter';
import type { DataFieldConfig, JobConfig, JobMethod, JsonObject, ResponseFilterConfig } from './types';

const dataFieldSchema = z.union(
  [
    z.string(),
    z.looseObject({
      path: z.string({ error: "'dataField.path' must be set!" }).min(1, { error: "'dataField.path' must be set!" }),
      delimiter: z.string({ error: "'dataField.delimiter' must be a string." }).min(1, { error: "'dataField.delimiter' must not be empty." }).nullish(),
    }),
  ],
  { error: "'dataField' must be either a path string or an object with 'path' attribute." },
);

const placeholdersSchema = z.record(
  z.string(),
  z.union(
    [
      z.string(),
      // user functions: `{path, function, args}` or `{path, placeholder: "value"}`
      z.looseObject({ path: z.string().min(1) }),
    ],
    {
      error: (iss) =>
        isObject(iss.input)
          ? "The path for placeholder must be a string value or an object containing 'path' and 'function'."
          : `The path for placeholder must be a string value, given '${phpType(iss.input)}'.`,
    },
  ),
  { error: "The 'placeholders' property must be an object mapping placeholder names to parent fields." },
);

// `responseFilter`: properties kept as one JSON-encoded cell, as the reference's JSON parser does
const RESPONSE_FILTER_MESSAGE = "The 'responseFilter' property must be a path string or an array of path strings.";

/** `compatLevel` values as the reference reads them: empty (null, "", 0, "0") means the latest, 3. */
export const compatLevelSchema = z.preprocess(
  (v) => (emptyToUndefined(v) === undefined || v === '0' ? undefined : typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : v),
  z
    .number({ error: "'compatLevel' must be 1, 2 or 3 (unset means 3, the latest)." })
    .refine((v) => v === 1 || v === 2 || v === 3, { error: "'compatLevel' must be 1, 2 or 3 (unset means 3, the latest)." })
    .optional(),
);

function normalizeResponseFilter(raw: Raw, compatLevel: number): ResponseFilterConfig | null {
  if (raw.responseFilter === undefined) return null;
  return {
    paths: typeof raw.responseFilter === 'string' ? [raw.responseFilter] : (raw.responseFilter as string[]),
    delimiter: (raw.responseFilterDelimiter as string | undefined) ?? DEFAULT_RESPONSE_FILTER_DELIMITER,
    legacy: compatLevel <= 2,
  };
}

/** One job; `children` are jobs too. */
export const jobSchema: z.ZodType<unknown> = z.lazy(() =>
  z.looseObject(
    {
      endpoint: z.string({ error: "The 'endpoint' property must be set in job." }).min(1, { error: "The 'endpoint' property must be set in job." }),
      method: methodSchema.nullish(),
      params: z.preprocess(emptyToUndefined, paramsSchema('params').optional()),
      dataField: z.preprocess(emptyToUndefined, dataFieldSchema.optional()),
      dataType: z.string({ error: "The 'dataType' property must be a string." }).nullish(),
      placeholders: z.preprocess(emptyToUndefined, placeholdersSchema.optional()),
      scroller: z.string({ error: "The 'scroller' property must be a scroller name." }).nullish(),
      responseFilter: z.preprocess(
        emptyToUndefined,
        z.union([z.string(), z.array(z.string({ error: RESPONSE_FILTER_MESSAGE }))], { error: RESPONSE_FILTER_MESSAGE }).optional(),
      ),
      responseFilterDelimiter: z.preprocess(
        emptyToUndefined,
        z.string({ error: "The 'responseFilterDelimiter' property must be a non-empty string." }).optional(),
      ),
      children: z.preprocess(emptyToUndefined, z.array(jobSchema, { error: "The 'children' property must be an array of jobs." }).optional()),
    },
    { error: 'Job configuration must be an object.' },
  ),
);

function normalizeDataField(raw: unknown): DataFieldConfig | null {
  if (raw === undefined) return null;
  if (typeof raw === 'string') return { path: raw, delimiter: '.' };
  const obj = raw as Raw;
  return { path: obj.path as string, delimiter: (obj.delimiter as string | null | undefined) || '.' };
}

export function normalizeJob(raw: Raw, id: string, compatLevel: number): JobConfig {
  const endpoint = raw.endpoint as string;
  return {
    id,
    endpoint,
    method: ((raw.method as string | null | undefined) ?? 'GET').toUpperCase() as JobMethod,
    params: (raw.params as JsonObject | undefined) ?? {},
    dataField: normalizeDataField(raw.dataField),
    dataType: (raw.dataType as string | null | undefined) || endpoint,
    ...normalizePlaceholders(raw.placeholders as Record<string, unknown> | undefined),
    scroller: (raw.scroller as string | null | undefined) || null,
    children: ((raw.children as Raw[] | undefined) ?? []).map((child, i) => normalizeJob(child, `${id}.${i}`, compatLevel)),
    responseFilter: normalizeResponseFilter(raw, compatLevel),
    ...(compatLevel <= 1 ? { legacyJsonParser: true } : {}), // the reference's legacy JSON parser
  };
}

/** Placeholders: `{name: path}`, and for `{path, function, …}` objects the function part (evaluated per parent row). */
function normalizePlaceholders(raw: Record<string, unknown> | undefined): Pick<JobConfig, 'placeholders' | 'placeholderFunctions'> {
  const placeholders: Record<string, string> = {};
  const functions: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(raw ?? {})) {
    if (typeof value === 'string') placeholders[name] = value;
    else {
      const { path, ...fn } = value as Raw;
      placeholders[name] = path as string;
      functions[name] = fn;
    }
  }
  return Object.keys(functions).length > 0 ? { placeholders, placeholderFunctions: functions } : { placeholders };
}
