import type { ActivityDeps } from './deps';
import { buildTableCsv } from './extract-build-csv';
import { cleanStaging } from './extract-clean-staging';
import { fetchPages } from './extract-fetch-pages';
import { findTable } from './extract-find-table';
import { readRunState } from './extract-read-run-state';
import { writeRunState } from './extract-write-run-state';
import { validateExtractConfig } from './extract-validate-config';

/** The extraction's activities (registered by `createActivities`). */
export function createExtractActivities(deps: ActivityDeps) {
  return {
    validateExtractConfig: validateExtractConfig(deps),
    fetchPages: fetchPages(deps),
    buildTableCsv: buildTableCsv(deps),
    findTable: findTable(deps),
    readRunState: readRunState(deps),
    writeRunState: writeRunState(deps),
    cleanStaging: cleanStaging(deps),
  };
}

export type {
  ChildBatchCheckpoint,
  FetchChildrenInput,
  FetchChildrenResult,
  FetchLimits,
  FetchPagesActivity,
  FetchPagesInput,
  FetchPagesResult,
  FetchPagesCheckpoint,
  FetchPagesTotals,
} from './extract-fetch-pages';
export type { BuildTableCsvInput, BuildTableCsvResult } from './extract-build-csv';
export type { FindTableInput, FindTableResult } from './extract-find-table';
export type { ReadRunStateInput, ReadRunStateResult } from './extract-read-run-state';
export type { WriteRunStateInput } from './extract-write-run-state';
export type { CleanStagingInput, CleanStagingResult } from './extract-clean-staging';
