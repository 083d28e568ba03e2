/**
 * What a Storage API request's span says: a name of few values (`Storage API POST /v2/storage/tables/{id}/import-async`)
 * and the ids it concerns (`sapi.table_id`, `sapi.bucket_id`, `sapi.file_id`, `sapi.job_id`), read from the path,
 * the JSON body (`dataFileId`) and the response (a job's or a file's id). Never a header, a query or a body beyond
 * those ids (a prepared file's response carries upload credentials). Pure.
 */
import { pathWithoutQuery, type SpanAttributes } from '../observability/spans';

/** Segments followed by an id in Storage API paths, and the attribute the id goes to. */
const ID_SEGMENTS: Readonly<Record<string, string>> = {
  tables: 'sapi.table_id',
  buckets: 'sapi.bucket_id',
  files: 'sapi.file_id',
  jobs: 'sapi.job_id',
  branch: 'sapi.branch_id',
};

/** Segments after `files/` that are verbs, not ids. */
const FILE_VERBS = new Set(['prepare']);

/** The path with its ids as `{id}`: `/v2/storage/jobs/123` → `/v2/storage/jobs/{id}`. */
function storageRoute(path: string): string {
  const segments = pathWithoutQuery(path).split('/');
  return segments.map((segment, i) => (i > 0 && isIdAfter(segments[i - 1]!, segment) ? '{id}' : segment)).join('/');
}

/** The span name of a Storage API request. */
export function storageSpanName(method: string, path: string): string {
  return `Storage API ${method} ${storageRoute(path)}`;
}

/** The ids a request names in its path and JSON body. */
export function storageRequestAttributes(path: string, json: unknown): SpanAttributes {
  const attributes: SpanAttributes = {};
  const segments = pathWithoutQuery(path).split('/');
  for (let i = 1; i < segments.length; i++) {
    const before = segments[i - 1]!;
    if (isIdAfter(before, segments[i]!)) attributes[ID_SEGMENTS[before]!] = decode(segments[i]!);
  }
  const fileId = (json as { dataFileId?: unknown } | undefined)?.dataFileId;
  if (typeof fileId === 'number' || typeof fileId === 'string') attributes['sapi.file_id'] = String(fileId);
  return attributes;
}

/** The ids an answer gives: the job an `…-async` call created or a job read (`sapi.job_id`, `sapi.job_status`), a file prepared or uploaded. */
export function storageResponseAttributes(path: string, data: unknown): SpanAttributes {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return {};
  const { id, status, operationName } = data as { id?: unknown; status?: unknown; operationName?: unknown };
  if (typeof id !== 'number' && typeof id !== 'string') return {};
  const route = storageRoute(path);
  if (typeof operationName === 'string' || /-async$|\/jobs\/\{id\}$/.test(route)) {
    return {
      'sapi.job_id': String(id),
      'sapi.job_status': typeof status === 'string' ? status : undefined,
      'sapi.job_operation': typeof operationName === 'string' ? operationName : undefined,
    };
  }
  if (/\/files\/prepare$|\/upload-file$/.test(route)) return { 'sapi.file_id': String(id) };
  return {};
}

function isIdAfter(before: string, segment: string): boolean {
  if (!(before in ID_SEGMENTS) || segment === '') return false;
  return before !== 'files' || !FILE_VERBS.has(segment);
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
