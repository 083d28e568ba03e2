/**
 * The secrets of `HttpClientConfig` (the client certificate, the AWS secret key) are `${env:NAME}` references in the
 * configuration, the workflow and history; {@link resolveClientSecrets} fills a copy right before requests are sent
 * (activity side), as `resolveRequestSecrets` does for a request. Workflow-safe (the environment is passed in).
 */
import { resolveSecretString, type SecretSource } from './secrets';
import type { HttpClientConfig } from './types';

/** A copy with the client certificate and the AWS secret key filled, and the values filled (to scrub errors). */
export function resolveClientSecrets(client: HttpClientConfig, source: SecretSource): { client: HttpClientConfig; secrets: string[] } {
  const secrets = new Set<string>();
  const resolved: HttpClientConfig = {
    ...client,
    clientCertificate: client.clientCertificate === null ? null : resolveSecretString(client.clientCertificate, source, secrets),
    awsSignature:
      client.awsSignature === null
        ? null
        : {
            ...client.awsSignature,
            accessKeyId: resolveSecretString(client.awsSignature.accessKeyId, source, secrets),
            secretKey: resolveSecretString(client.awsSignature.secretKey, source, secrets),
          },
  };
  return { client: resolved, secrets: [...secrets] };
}
