/**
 * Building blocks of the extractor configuration's schemas (config-schema.ts, scroller-schema.ts, job-schema.ts): the
 * reference's notion of an empty section, PHP's type names for its messages, and the small value schemas several
 * sections share.
 *
 * NOT workflow-safe (zod values).
 */
import { z } from 'zod';

/** A configuration object as the schema let it through, before normalization. */
export type Raw = Record<string, unknown>;

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** PHP's `gettype` names, used in the reference's messages. */
export function phpType(value: unknown): string {
  if (value === null) return 'NULL';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'double';
  if (typeof value === 'object') return 'object';
  return typeof value;
}

/** Empty sections (null, "", false, {}, []) are "not set", as in the reference (`!empty(...)`). */
export const emptyToUndefined = (v: unknown): unknown =>
  v === null || v === '' || v === false || v === 0 || (Array.isArray(v) && v.length === 0) || (isObject(v) && Object.keys(v).length === 0) ? undefined : v;

const METHOD_MESSAGE = 'The "method" property must be one of "GET", "POST", "FORM" (case-insensitive).';
export const methodSchema = z.string({ error: METHOD_MESSAGE }).refine((v) => ['GET', 'POST', 'FORM'].includes(v.toUpperCase()), { error: METHOD_MESSAGE });

export const paramsSchema = (what: string) => z.record(z.string(), z.unknown(), { error: `The '${what}' property must be an object.` });

export const nonNegativeInt = (message: string) =>
  z.union(
    [z.number({ error: message }).int({ error: message }).nonnegative({ error: message }), z.string({ error: message }).regex(/^\d+$/, { error: message })],
    {
      error: message,
    },
  );
