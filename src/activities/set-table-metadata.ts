import { inContext, SapiError } from '../errors';
import { DESCRIPTION_METADATA_KEY } from '../contracts/transfer';
import type { MetadataPair } from '../storage-api';
import type { ActivityDeps } from './deps';
import { asActivity } from './context';

export interface SetTableMetadataInput {
  connection?: string;
  tableId: string;
  provider: string;
  /** Set as `KBC.description`. */
  description?: string;
  /** Key → value. */
  metadata?: Record<string, string>;
}

export interface SetTableMetadataResult {
  /** Entries set (description included). */
  entries: number;
}

/**
 * Sets an imported table's metadata (`POST tables/{id}/metadata`): the description as `KBC.description` and the
 * key/value pairs, in one request under one provider. Setting the same provider and key again overwrites the value,
 * so a retry ends in the same state. A refusal names the table and the keys.
 */
export function setTableMetadata(deps: ActivityDeps) {
  return (input: SetTableMetadataInput): Promise<SetTableMetadataResult> =>
    asActivity(async () => {
      const pairs: MetadataPair[] = [
        ...(input.description !== undefined ? [{ key: DESCRIPTION_METADATA_KEY, value: input.description }] : []),
        ...Object.entries(input.metadata ?? {}).map(([key, value]) => ({ key, value })),
      ];
      if (!pairs.length) return { entries: 0 };
      try {
        await deps.storage(input.connection).setTableMetadata({ tableId: input.tableId, provider: input.provider, metadata: pairs });
      } catch (err) {
        if (err instanceof SapiError) {
          throw inContext(
            err,
            `setting metadata (${pairs.map((p) => p.key).join(', ')}, provider ${input.provider}) on table ${input.tableId} failed: ${err.message}`,
            {
              tableId: input.tableId,
            },
          );
        }
        throw err;
      }
      return { entries: pairs.length };
    });
}
