/**
 * The package's optional peer dependencies, loaded where a feature first needs them and nowhere else: a worker that
 * never meets an Azure stack and runs without tracing installs and loads none of them. A missing one fails the
 * feature with `SAPI_MISSING_DEPENDENCY`, naming it and the `npm install` command (docs/dependencies.md). The
 * versions are the ones this package is tested with (its `peerDependencies`; a unit test compares them).
 */
import type * as AzureBlob from '@azure/storage-blob';
import type * as OtelApi from '@opentelemetry/api';
import type * as OtelContext from '@opentelemetry/context-async-hooks';
import type * as OtelCore from '@opentelemetry/core';
import type * as OtelExporter from '@opentelemetry/exporter-trace-otlp-http';
import type * as OtelResources from '@opentelemetry/resources';
import type * as OtelTraceBase from '@opentelemetry/sdk-trace-base';
import type * as TemporalOtel from '@temporalio/interceptors-opentelemetry';
import { SapiMissingDependencyError } from './errors';

/** Each optional package's module type, by name. */
interface OptionalModules {
  '@azure/storage-blob': typeof AzureBlob;
  '@opentelemetry/api': typeof OtelApi;
  '@opentelemetry/context-async-hooks': typeof OtelContext;
  '@opentelemetry/core': typeof OtelCore;
  '@opentelemetry/exporter-trace-otlp-http': typeof OtelExporter;
  '@opentelemetry/resources': typeof OtelResources;
  '@opentelemetry/sdk-trace-base': typeof OtelTraceBase;
  '@temporalio/interceptors-opentelemetry': typeof TemporalOtel;
}

/** A package this module loads. */
type OptionalDependency = keyof OptionalModules;

/** Who needs what: the feature named in the error, and every package it takes (installed together). */
export const OPTIONAL_FEATURES = {
  azure: { feature: 'an Azure Blob Storage stack (absUploadParams / absCredentials)', packages: ['@azure/storage-blob@12.29.1'] },
  tracing: {
    feature: "tracing (SAPI_OTEL_ENDPOINT, OTEL_EXPORTER_OTLP_* or the plugin's `tracing` option)",
    packages: [
      '@temporalio/interceptors-opentelemetry@1.24.0',
      '@opentelemetry/api@1.9.0',
      '@opentelemetry/core@1.30.1',
      '@opentelemetry/context-async-hooks@1.30.1',
      '@opentelemetry/resources@1.30.1',
      '@opentelemetry/sdk-trace-base@1.30.1',
      '@opentelemetry/exporter-trace-otlp-http@0.57.2',
    ],
  },
} as const satisfies Record<string, { feature: string; packages: readonly string[] }>;

type OptionalFeature = keyof typeof OPTIONAL_FEATURES;

/**
 * Loads an optional package for a feature (a `require`, cached by Node after the first call). Throws
 * `SAPI_MISSING_DEPENDENCY` with the feature's install command when the package is not installed; any other load
 * failure passes as it is.
 */
export function loadOptional<N extends OptionalDependency>(name: N, feature: OptionalFeature): OptionalModules[N] {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require(name) as OptionalModules[N];
  } catch (err) {
    if (!isNotFound(err, name)) throw err;
    throw new SapiMissingDependencyError(OPTIONAL_FEATURES[feature].feature, OPTIONAL_FEATURES[feature].packages, err);
  }
}

/** True when `err` is Node's "Cannot find module" for `name` itself (not for a module it requires). */
function isNotFound(err: unknown, name: string): boolean {
  const { code, message } = err as NodeJS.ErrnoException;
  return code === 'MODULE_NOT_FOUND' && typeof message === 'string' && message.includes(`'${name}'`);
}
