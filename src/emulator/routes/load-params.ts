import { type EmulatorContext } from '../context';
import { ApiError, TOO_MANY_COLUMNS, tooManyColumnsMessage, validation } from '../errors';
import { type FormObject, parseBool, parseIntParam, parseList, parseString } from '../form';
import { type TokenRecord } from '../model';
import { readableFile } from './file-routes';

function csvChar(params: FormObject, name: string, fallback: string, allowEmpty: boolean): string {
  const raw = params[name];
  if (raw === undefined) return fallback;
  const value = parseString(raw);
  const decoded = value === '\\t' ? '\t' : value;
  if (decoded === undefined || decoded.length > 1 || (!allowEmpty && decoded.length === 0)) {
    throw validation(`${name} must be a single character${allowEmpty ? ' or empty' : ''}; got ${JSON.stringify(raw)}`, 'storage.tables.validation');
  }
  return decoded;
}

function bool(params: FormObject, name: string): boolean {
  const raw = params[name];
  if (raw === undefined) return false;
  const value = parseBool(raw);
  if (value === undefined) throw validation(`${name} must be a boolean (true, false, 1, 0); got ${JSON.stringify(raw)}`, 'storage.tables.validation');
  return value;
}

/** Comma string or array. */
export function columnList(value: unknown): string[] | undefined {
  if (value === undefined || value === '') return undefined;
  const list = typeof value === 'string' ? value.split(',') : (parseList(value) ?? []);
  const cleaned = list.map((c) => c.trim()).filter(Boolean);
  return cleaned.length ? cleaned : undefined;
}

/** Parameters shared by `tables-async` and `import-async`, checked before the job is created. */
export function loadParams(ctx: EmulatorContext, params: FormObject, options: { create: boolean; token: TokenRecord }): Record<string, unknown> {
  if (params.dataFileId === undefined || params.dataFileId === '') {
    throw validation('dataFileId is required: the id of an uploaded file (files/prepare or the importer)', 'storage.tables.validation');
  }
  const fileId = parseIntParam(params.dataFileId);
  if (fileId === undefined) throw validation(`dataFileId must be an integer; got ${JSON.stringify(params.dataFileId)}`, 'storage.tables.validation');
  readableFile(ctx, options.token, fileId);
  const delimiter = csvChar(params, 'delimiter', ',', false);
  const enclosure = csvChar(params, 'enclosure', '"', true);
  const escapedBy = csvChar(params, 'escapedBy', '', true);
  if (enclosure && escapedBy) throw validation('enclosure and escapedBy cannot be used together; send one of them empty', 'storage.tables.validation');
  const ignoredLinesCount = params.ignoredLinesCount === undefined ? 0 : parseIntParam(params.ignoredLinesCount);
  if (ignoredLinesCount === undefined || ignoredLinesCount < 0) {
    throw validation(`ignoredLinesCount must be a non-negative integer; got ${JSON.stringify(params.ignoredLinesCount)}`, 'storage.tables.validation');
  }
  const columns = columnList(params.columns);
  if (columns && columns.length > ctx.maxTableColumns)
    throw new ApiError(400, TOO_MANY_COLUMNS, tooManyColumnsMessage(ctx.maxTableColumns, 'The columns parameter', columns.length));
  const out: Record<string, unknown> = {
    source: { type: 'file', fileId },
    dataFileId: fileId,
    delimiter,
    enclosure,
    escapedBy,
    columns,
    withoutHeaders: bool(params, 'withoutHeaders'),
    ignoredLinesCount,
    treatValuesAsNull: parseList(params.treatValuesAsNull) ?? [],
  };
  if (options.create) out.primaryKey = columnList(params.primaryKey) ?? [];
  else out.incremental = bool(params, 'incremental');
  if (out.withoutHeaders && options.create && !out.columns) {
    throw new ApiError(
      400,
      'storage.tables.validation',
      'withoutHeaders needs columns[] when creating a table: there is no header to take the column names from',
    );
  }
  return out;
}
