/**
 * The workflow-safe part of the extractor, in one import: no Node built-ins, no undici, no zod values, no clock or
 * randomness. Workflows import from here (or from the single modules); types come from `./types`.
 */
export { planChildRuns, type ChildPlan, type ChildRun, type ParentContext, type PlaceholderValue } from './children';
export { ExtractorError, ExtractorErrorCode, type ExtractorErrorCodeValue } from './errors';
export { cellValue, flattenRecords, DATA_COLUMN, PARENT_ID_COLUMN, type FlatTable, type FlattenOptions } from './flatten';
export { processPage, type ProcessedPage, type RunContext } from './page';
// JSON parser parity (ge-json): the parser, PHP's value forms and responseFilter
export { PARENT_KEY_MARK, parseRecords, type ParsedTable, type ParseRecordsOptions } from './json-parser';
export { phpJsonEncode, phpNumberString, phpSerialize } from './php-values';
export { applyResponseFilter, DEFAULT_RESPONSE_FILTER_DELIMITER } from './response-filter';
export { configMappedTables, mapRecords, mappedPrimaryKeys, mappedTables, type MappedTableSpec } from './mapping';
export { matchesRecursionFilter, parseRecursionFilter, type RecursionFilter } from './recursion-filter';
export { getPath, isEmptyValue, isTruthy, type PathLookup } from './path';
export { resolveRecords, type ResolvedRecords } from './records';
export { firstRequestSpec, scrollerForJob, scrollTemplateSpec, toDescriptor, type RequestSpec } from './request';
export {
  createScrollerState,
  digestPage,
  nextStep,
  type DigestValue,
  type PageDigest,
  type PageResult,
  type ScrollRules,
  type ScrollerState,
  type StepResult,
  type StopReason,
} from './scroller';
export { alignRow, columnsOf, createTableSchema, csvLine, mergeTableSchema, type TableSchema } from './table-schema';
export { columnNamesFor, safeName, tableNameFor } from './table-names';
export type * from './types';
