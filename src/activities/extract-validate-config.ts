import { parseExtractorConfig } from '../extractor/config-schema';
import { assertReferencesResolvable, clearSecretsError, DEFAULT_SECRET_ENV_PREFIX, findClearSecrets } from '../extractor/secrets';
import type { ExtractorConfig } from '../extractor/types';
import { unboundSecrets } from '../extractor/secret-hosts';
import { SapiInputForbiddenError } from '../errors';
import { checkUrlResolved } from '../security/network';
import type { ActivityDeps } from './deps';
import { asActivity } from './context';

export interface ValidateExtractConfigInput {
  /** The Generic-Extractor configuration JSON as the user wrote it. */
  config: unknown;
}

/**
 * Validates a Generic-Extractor configuration (zod, outside the workflow sandbox) and returns it normalized, for
 * the workflow's pure scroller. An invalid one fails with the non-retryable `SAPI_EXTRACT_CONFIG_INVALID`
 * listing every issue (path + rule), before any request is sent. So does a secret given in clear (a `#` key, a
 * credential header or param without an `${env:NAME}` reference: the failure names where, never the value) and a
 * reference this worker cannot resolve (outside `SAPI_EXTRACT_SECRET_ENV_PREFIX`, or not set). A secret without its
 * `<NAME>_HOSTS` binding, or a `baseUrl` the worker's input policy refuses, fails with `SAPI_INPUT_FORBIDDEN`. The result keeps the
 * references; only `fetchPages` fills them, in the request it sends.
 */
export function validateExtractConfig(deps: ActivityDeps) {
  return (input: ValidateExtractConfigInput): Promise<ExtractorConfig> =>
    asActivity(async () => {
      const config = parseExtractorConfig(input.config);
      const prefix = deps.settings.extractSecretEnvPrefix ?? DEFAULT_SECRET_ENV_PREFIX;
      const clear = findClearSecrets(input.config);
      if (clear.length > 0) throw clearSecretsError(clear, prefix);
      const secrets = { env: process.env, prefix, bindHosts: true };
      assertReferencesResolvable(input.config, secrets);
      // the worker's input policy, before any request: every secret bound to its hosts, the API one the worker may reach
      const unbound = unboundSecrets(input.config, secrets);
      if (unbound.length > 0) throw new SapiInputForbiddenError(unbound[0]!.path, unbound[0]!.message);
      await checkUrlResolved(deps.settings.policy, 'api.baseUrl', config.api.baseUrl);
      return config;
    });
}
