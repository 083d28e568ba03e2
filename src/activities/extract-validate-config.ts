import { parseExtractorConfig } from '../extractor/config-schema';
import type { ExtractorConfig } from '../extractor/types';
import type { ActivityDeps } from './deps';
import { asActivity } from './context';

export interface ValidateExtractConfigInput {
  /** The Generic-Extractor configuration JSON as the user wrote it. */
  config: unknown;
}

/**
 * Validates a Generic-Extractor configuration (zod, outside the workflow sandbox) and returns it normalized, for
 * the workflow's pure scroller. An invalid one fails with the non-retryable `SAPI_EXTRACT_CONFIG_INVALID`
 * listing every issue (path + rule), before any request is sent.
 */
export function validateExtractConfig(_deps: ActivityDeps) {
  return (input: ValidateExtractConfigInput): Promise<ExtractorConfig> => asActivity(async () => parseExtractorConfig(input.config));
}
