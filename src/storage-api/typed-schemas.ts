/**
 * zod schemas of the typed-table and metadata responses (`tables-definition`, table detail `isTyped`/`definition`,
 * `tables/{id}/metadata`). Kept apart from `schemas.ts` so the two can change independently.
 */
import { z } from 'zod';
import { tableSchema } from './schemas';

/** One metadata entry: `{id, key, value, provider, timestamp}` (ids are numeric strings on the service). */
export const metadataEntrySchema = z.looseObject({
  id: z.union([z.string(), z.number()]).transform(String),
  key: z.string(),
  value: z
    .string()
    .nullable()
    .transform((v) => v ?? ''),
  provider: z.string().nullable().optional(),
  timestamp: z.string().nullable().optional(),
});
export type MetadataEntry = z.infer<typeof metadataEntrySchema>;
export const metadataListSchema = z.array(metadataEntrySchema);

/**
 * `POST tables/{id}/metadata` answers `{metadata, columnsMetadata}` on current stacks; older ones answered the list of
 * the table's entries. Both read as `{metadata}`.
 */
export const tableMetadataAnswerSchema = z.preprocess(
  (raw) => (Array.isArray(raw) ? { metadata: raw } : raw),
  z.looseObject({
    metadata: metadataListSchema.default([]),
    columnsMetadata: z.union([z.record(z.string(), metadataListSchema), z.array(z.unknown())]).optional(),
  }),
);
export type TableMetadataAnswer = z.infer<typeof tableMetadataAnswerSchema>;

/** A column of a typed table's `definition`: `{name, definition: {type, length, nullable, default}, basetype}`. */
export const columnDefinitionSchema = z.looseObject({
  name: z.string(),
  definition: z.looseObject({
    type: z.string(),
    length: z.union([z.string(), z.number()]).nullable().optional(),
    nullable: z.boolean().optional(),
    default: z.union([z.string(), z.number()]).nullable().optional(),
  }),
  basetype: z.string().nullable().optional(),
});

/** Table detail with the typed-table fields: `isTyped` (absent on older stacks: untyped) and `definition`. */
export const typedTableSchema = tableSchema.extend({
  isTyped: z.boolean().default(false),
  definition: z
    .looseObject({ primaryKeysNames: z.array(z.string()).default([]), columns: z.array(columnDefinitionSchema).default([]) })
    .nullable()
    .optional(),
  metadata: metadataListSchema.optional(),
});
export type TypedTable = z.infer<typeof typedTableSchema>;
