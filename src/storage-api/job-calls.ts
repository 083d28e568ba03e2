/** Storage API calls on jobs (never branch-scoped), and the short wait for a job a synchronous-looking call started. */
import { SapiInvalidResponseError } from '../errors';
import { type CallContext, type CallOptions, seg } from './calls';
import { jobListSchema, jobSchema, type Job } from './schemas';

export interface ListJobsInput extends CallOptions {
  /** Default 100. */
  limit?: number;
  offset?: number;
}

export interface JobCalls {
  /** `GET jobs/{id}`, or the job's own `url`. */
  getJob(input: { jobId: number | string; url?: string } & CallOptions): Promise<Job>;
  /** `GET jobs?limit=&offset=`, newest first. */
  listJobs(input?: ListJobsInput): Promise<Job[]>;
}

/** The job calls of a client whose base URL is `serviceUrl` (a job's own `url` is followed only on that origin). */
export function jobCalls(ctx: CallContext, serviceUrl: string): JobCalls {
  const { http } = ctx;
  return {
    async getJob(input) {
      // Jobs are never branch-scoped. A job's own `url` is used when it points at the same service.
      const path = input.url && sameOrigin(input.url, serviceUrl) ? input.url : `/v2/storage/jobs/${seg(String(input.jobId))}`;
      return (await http.request({ method: 'GET', path, schema: jobSchema, signal: input.signal })).data;
    },

    async listJobs(input = {}) {
      const res = await http.request({
        method: 'GET',
        path: '/v2/storage/jobs',
        query: { limit: input.limit ?? 100, offset: input.offset },
        schema: jobListSchema,
        signal: input.signal,
      });
      return res.data;
    },
  };
}

/** Polls a short job (a bucket delete) until it ends, for at most ~30 s; fails when it ends in error. */
export async function waitBriefly(client: Pick<JobCalls, 'getJob'>, job: Job, signal?: AbortSignal): Promise<void> {
  let current = job;
  for (let i = 0; i < 60 && (current.status === 'waiting' || current.status === 'processing'); i++) {
    await new Promise((r) => setTimeout(r, 500));
    signal?.throwIfAborted();
    current = await client.getJob({ jobId: current.id, signal });
  }
  if (current.status === 'error') {
    const error = current.error;
    throw new SapiInvalidResponseError({
      request: { method: 'DELETE', path: `job ${current.id}` },
      problem: `job ${current.id} failed: ${typeof error === 'string' ? error : error?.message}`,
    });
  }
}

function sameOrigin(a: string, b: string): boolean {
  try {
    return new URL(a).origin === new URL(b).origin;
  } catch {
    return false;
  }
}
