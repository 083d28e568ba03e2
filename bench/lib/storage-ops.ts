/** Storage API steps the baselines and fixtures take directly (no Temporal): buckets, jobs, a direct CSV import. */
import { createReadStream } from 'node:fs';
import { S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { DEFAULT_PART_SIZE_MIB, DEFAULT_TRANSFER_CONCURRENCY } from '../../src/config';
import type { Job, StorageClient } from '../../src/storage-api';
import type { BenchStack } from './stack';

/**
 * Part size and queue of every lib-storage upload of the bench: the worker's (the plugin's defaults, 8 MiB × 4, or
 * `SAPI_PART_SIZE_MIB` / `SAPI_TRANSFER_CONCURRENCY` when set for the run), so both sides send the same requests.
 */
export const BASELINE_PART_SIZE = Number(process.env.SAPI_PART_SIZE_MIB ?? DEFAULT_PART_SIZE_MIB) * 1024 * 1024;
export const BASELINE_QUEUE_SIZE = Number(process.env.SAPI_TRANSFER_CONCURRENCY ?? DEFAULT_TRANSFER_CONCURRENCY);

/** Creates `in.c-<name>` unless it exists. */
export async function ensureBucket(storage: StorageClient, name: string): Promise<string> {
  const bucketId = `in.c-${name}`;
  const existing = await storage.listBuckets();
  if (!existing.some((b) => b.id === bucketId)) await storage.createBucket({ name, stage: 'in' });
  return bucketId;
}

/** Polls a job every `intervalMs` until it ends; throws with the job's message when it fails. */
export async function waitForJob(storage: StorageClient, jobId: number, intervalMs = 100, timeoutMs = 60 * 60_000): Promise<Job> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = await storage.getJob({ jobId });
    if (job.status === 'success') return job;
    if (job.status === 'error') throw new Error(`job ${jobId} (${job.operationName}) failed: ${JSON.stringify(job.error)}`);
    if (Date.now() > deadline) throw new Error(`job ${jobId} (${job.operationName}) still ${job.status} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Prepares a file and uploads `path` with lib-storage and the prepared credentials; returns the file id. */
export async function uploadPrepared(stack: BenchStack, path: string, name: string): Promise<number> {
  const prepared = await stack.storage.prepareFile({ name });
  const params = prepared.uploadParams!;
  const s3 = new S3Client({
    endpoint: stack.minio.endpoint,
    region: stack.minio.region,
    forcePathStyle: true,
    credentials: {
      accessKeyId: params.credentials.AccessKeyId,
      secretAccessKey: params.credentials.SecretAccessKey,
      sessionToken: params.credentials.SessionToken,
    },
  });
  try {
    await new Upload({
      client: s3,
      params: { Bucket: params.bucket, Key: params.key, Body: createReadStream(path) },
      partSize: BASELINE_PART_SIZE,
      queueSize: BASELINE_QUEUE_SIZE,
    }).done();
  } finally {
    s3.destroy();
  }
  return Number(prepared.id);
}

/** Direct import (no Temporal): upload + `tables-async` + wait. Returns the table id and the job. */
export async function importCsvDirect(stack: BenchStack, path: string, bucket: string, table: string): Promise<{ tableId: string; job: Job; fileId: number }> {
  const bucketId = await ensureBucket(stack.storage, bucket);
  const fileId = await uploadPrepared(stack, path, `${table}.csv`);
  const started = await stack.storage.createTableAsync({ bucketId, name: table, dataFileId: fileId });
  const job = await waitForJob(stack.storage, Number(started.id));
  return { tableId: `${bucketId}.${table}`, job, fileId };
}
