import { type ActivityDeps } from './deps';
import { checkImportTarget } from './check-import-target';
import { cleanUpImport } from './clean-up-import';
import { ensureBucket } from './ensure-bucket';
import { inspectSource } from './inspect-source';
import { prepareFile } from './prepare-file';
import { prepareImport } from './prepare-import';
import { uploadAndStartJob } from './upload-and-start-job';
import { uploadFile } from './upload-file';
import { uploadSlices } from './upload-slices';
import { uploadViaImporter } from './upload-via-importer';
import { createTableAsync, createTableDefinition, exportTableAsync, getJob, loadTableAsync } from './table-jobs';
import { setTableMetadata } from './set-table-metadata';
import { checkDestination, downloadFile, getFileDetails } from './download-file';
import type * as ExtractActivitiesModule from './extract-activities';
import { registeredSearchAttributes } from './search-attributes';
import { awaitJob } from './await-job';
import { writeReceipt } from './write-receipt';

/**
 * All activities of the plugin, closed over their dependencies. Workflows type their proxies with
 * {@link SapiActivities} (import type only).
 *
 * @internal The plugin's wiring, not a stable API: register the activities with `SapiPlugin`.
 */
export function createActivities(deps: ActivityDeps) {
  return {
    checkImportTarget: checkImportTarget(deps),
    inspectSource: inspectSource(deps),
    cleanUpImport: cleanUpImport(deps),
    ensureBucket: ensureBucket(deps),
    prepareImport: prepareImport(deps),
    prepareFile: prepareFile(deps),
    uploadAndStartJob: uploadAndStartJob(deps),
    uploadFile: uploadFile(deps),
    uploadSlices: uploadSlices(deps),
    uploadViaImporter: uploadViaImporter(deps),
    createTableAsync: createTableAsync(deps),
    createTableDefinition: createTableDefinition(deps),
    setTableMetadata: setTableMetadata(deps),
    loadTableAsync: loadTableAsync(deps),
    getJob: getJob(deps),
    awaitJob: awaitJob(deps),
    exportTableAsync: exportTableAsync(deps),
    getFileDetails: getFileDetails(deps),
    checkDestination: checkDestination(deps),
    downloadFile: downloadFile(deps),
    registeredSearchAttributes: registeredSearchAttributes(deps),
    writeReceipt: writeReceipt(deps),
    ...lazyExtractActivities(deps),
  };
}

type ExtractActivities = ReturnType<typeof ExtractActivitiesModule.createExtractActivities>;

/** The extraction's activity names (a type check below keeps the list equal to `createExtractActivities`'s keys). */
const EXTRACT_ACTIVITY_NAMES = ['validateExtractConfig', 'fetchPages', 'buildTableCsv', 'findTable', 'readRunState', 'writeRunState', 'cleanStaging'] as const;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
const extractNamesComplete: Same<(typeof EXTRACT_ACTIVITY_NAMES)[number], keyof ExtractActivities> = true;
void extractNamesComplete;

/**
 * The extraction's activities, registered by name at once but loaded on their first call: the extractor (its config
 * schemas, HTTP client, JSON parser, page-group writer: ~60 modules, ~3.6 MB of V8 heap) stays out of a worker that
 * only imports and exports.
 */
function lazyExtractActivities(deps: ActivityDeps): ExtractActivities {
  let loaded: ExtractActivities | undefined;
  const load = (): ExtractActivities =>
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    (loaded ??= (require('./extract-activities') as typeof ExtractActivitiesModule).createExtractActivities(deps));
  const lazy = (name: (typeof EXTRACT_ACTIVITY_NAMES)[number]) => {
    const call = (...args: unknown[]): unknown => (load()[name] as (...a: unknown[]) => unknown)(...args);
    Object.defineProperty(call, 'name', { value: name });
    return call;
  };
  return Object.fromEntries(EXTRACT_ACTIVITY_NAMES.map((name) => [name, lazy(name)])) as unknown as ExtractActivities;
}

/** @internal The activities' types, for the workflows' proxies. */
export type SapiActivities = ReturnType<typeof createActivities>;
export { createActivityDeps, type ActivityDeps } from './deps';
export type { PreparedUpload, PrepareFileInput } from './prepare-file';
export type { UploadFileInput, UploadFileResult } from './upload-file';
export type { DownloadFileInput, DownloadFileResult, FileDetails } from './download-file';
