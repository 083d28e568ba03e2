// Loaded by path (DataConverter.failureConverterPath) in the worker process, in the workflow sandbox and by
// clients: keep it free of Node builtins.
import { DefaultFailureConverter } from '@temporalio/common';

/**
 * Moves failure messages and stack traces into an encoded payload (`encodedAttributes`), so the payload codec
 * encrypts them like any other payload. Used only when the codec is on.
 */
export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
