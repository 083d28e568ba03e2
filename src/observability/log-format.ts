/** Formats of the worker's log (`SAPI_LOG_FORMAT`): `text` (the SDK's default lines) or `json` (one object a line). */
export const LOG_FORMATS = ['text', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];
/** Default of `SAPI_LOG_FORMAT`. */
export const DEFAULT_LOG_FORMAT: LogFormat = 'text';
