/**
 * Finds the records of a response (the job's `dataField`, or auto-detection). Pure module.
 */
import { ExtractorDataError } from './errors';
import { getPath, isEmptyValue } from './path';
import type { JobConfig } from './types';

/** Records of one response, with warnings (e.g. a `dataField` that holds no data). */
interface ResolvedRecords {
  records: unknown[];
  warnings: string[];
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Returns the records of a decoded response.
 * - With `dataField` (a path, `{path, delimiter}`, `.` = the whole response): the value there; an array is used
 *   whole, a single object or scalar becomes one record, an empty value (absent, null, "", 0, [] …) gives no
 *   records and a warning.
 * - Without: a top-level array is used whole; otherwise the single array at the root of the object; none gives no
 *   records and a warning; two or more throw `ExtractorDataError` naming them.
 */
export function resolveRecords(body: unknown, job: Pick<JobConfig, 'dataField' | 'endpoint'>): ResolvedRecords {
  const dataField = job.dataField;
  if (dataField && dataField.path !== '') {
    const found = getPath(body, dataField.path, dataField.delimiter);
    if (isEmptyValue(found.value)) {
      return { records: [], warnings: [`dataField '${dataField.path}' contains no data! (endpoint: ${job.endpoint})`] };
    }
    return { records: Array.isArray(found.value) ? found.value : [found.value], warnings: [] };
  }
  if (Array.isArray(body)) return { records: body, warnings: [] };
  if (!isObject(body)) {
    throw new ExtractorDataError(
      `Unknown response from API: expected a JSON object or array, got ${body === null ? 'null' : typeof body} ` + `(endpoint: ${job.endpoint}).`,
    );
  }
  const arrays = Object.keys(body).filter((key) => Array.isArray(body[key]));
  if (arrays.length === 1) return { records: body[arrays[0]] as unknown[], warnings: [] };
  if (arrays.length === 0) {
    return { records: [], warnings: [`No data array found in response! (endpoint: ${job.endpoint})`] };
  }
  throw new ExtractorDataError(
    "More than one array found in response! Use 'dataField' parameter to specify a key to the data array. " +
      `(endpoint: ${job.endpoint}, arrays in response root: ${arrays.join(', ')})`,
  );
}
