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
import { createExtractActivities } from './extract-activities';
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
    ...createExtractActivities(deps),
  };
}

/** @internal The activities' types, for the workflows' proxies. */
export type SapiActivities = ReturnType<typeof createActivities>;
export { createActivityDeps, type ActivityDeps } from './deps';
export type { PreparedUpload, PrepareFileInput } from './prepare-file';
export type { UploadFileInput, UploadFileResult } from './upload-file';
export type { DownloadFileInput, DownloadFileResult, FileDetails } from './download-file';
