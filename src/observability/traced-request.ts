/**
 * An undici request in a span while tracing is on (see `spans.ts`): method, host, path (never the
 * query: a presigned URL's signature and credentials live there) and the answer's status. The span ends when the
 * response's headers arrive; the body streams afterwards, outside it.
 */
import type { Dispatcher } from 'undici';
import { pathWithoutQuery, tracingOn, withSpan, type SpanAttributes } from './spans';

/** `dispatcher.request(options)`, in a span named `name` with `attributes` when tracing is on. */
export function tracedRequest(
  dispatcher: Dispatcher,
  options: Dispatcher.RequestOptions,
  name: string,
  attributes: SpanAttributes = {},
): Promise<Dispatcher.ResponseData> {
  if (!tracingOn()) return dispatcher.request(options);
  let host: string | undefined;
  try {
    host = new URL(String(options.origin)).hostname;
  } catch {
    host = undefined;
  }
  const base = { 'http.request.method': options.method, 'server.address': host, 'url.path': pathWithoutQuery(options.path), ...attributes };
  return withSpan(name, base, async (span) => {
    const res = await dispatcher.request(options);
    span.set({ 'http.response.status_code': res.statusCode });
    return res;
  });
}
