/**
 * Poll latency: imports whose Storage job is held `processing` for a known time (the emulator's `slowJob` fault:
 * 2 s, 10 s, 30 s by default) → how long after the job ended the workflow had the answer (the completion of the
 * `getJob` activity that returned `success`, from the history), against the budget max(1 s, 25 % of the job's
 * duration). The job's own start and end are watched from outside (GET jobs every 50 ms). Measured with the
 * default schedule (1 s, ×2, cap 20 s and 25 % of the time waited) and with the plain ×2 backoff (elapsedFraction 0).
 */
import { defaultPayloadConverter } from '@temporalio/common';
import type { PollingOptions } from '../../src/contracts/transfer';
import type { ImportTableResult, JobSummary } from '../../src/contracts/transfer';
import type { Scenario } from '../lib/context';
import type { ActivitySpan, HistoryTimings } from '../lib/history';
import { figure, type Figure } from '../lib/report';
import type { BenchStack } from '../lib/stack';

/** How often the outside watcher reads the newest job (ms): the resolution of "the job ended at". */
export const WATCH_INTERVAL_MS = 50;

const SCHEDULES: Array<{ label: string; polling?: PollingOptions; target: boolean }> = [
  { label: 'default (1 s ×2, cap 20 s and 25 % of the wait)', target: true },
  // for comparison only: what the 25 % cap buys
  { label: 'plain ×2 backoff (elapsedFraction 0)', polling: { elapsedFraction: 0 }, target: false },
];

/** The latency budget for a job that ran `durationMs`: max(1 s, 25 %). */
export function latencyBudgetMs(durationMs: number): number {
  return Math.max(1000, 0.25 * durationMs);
}

export const pollLatencyScenario: Scenario = async (ctx) => {
  const { stack, options } = ctx;
  const csv = await ctx.fixtures.csv(0.01);
  const figures: Figure[] = [];
  const runs: Array<Record<string, unknown>> = [];
  let n = 0;
  for (const schedule of SCHEDULES) {
    for (const seconds of options.durationsS) {
      n++;
      const table = `poll_${n}`;
      await stack.emulatorFault({ slowJob: { operationName: 'tableCreate', ms: seconds * 1000, times: 1 } });
      const watcher = watchNewJobs(stack);
      let run;
      try {
        ctx.log(`${schedule.label}: job held ${seconds} s …`);
        run = await ctx.runWorkflow<ImportTableResult>(
          'importTableWorkflow',
          { source: csv.path, bucketId: 'in.c-bench', createBucket: true, table, polling: schedule.polling },
          'poll',
        );
      } finally {
        await watcher.stop();
      }
      const jobId = jobStart(run.timings)?.jobId;
      const seen = jobId === undefined ? undefined : watcher.jobs.get(jobId);
      const polls = run.timings.activities.filter((a) => a.type === 'getJob');
      const noticing = polls.find((a) => a.outcome === 'completed' && decode<JobSummary>(a.result)?.status === 'success');
      if (!seen?.endMs || !noticing?.endedMs)
        throw new Error(`job ${jobId} of ${table}: end not observed (watcher ${JSON.stringify(seen)}, polls ${polls.length})`);
      const durationMs = seen.endMs - seen.firstSeenMs;
      const latencyMs = noticing.endedMs - seen.endMs;
      const budgetMs = latencyBudgetMs(durationMs);
      runs.push({
        schedule: schedule.label,
        heldSeconds: seconds,
        jobId,
        durationMs: Math.round(durationMs),
        latencyMs: Math.round(latencyMs),
        budgetMs: Math.round(budgetMs),
        polls: polls.length,
        workflowId: run.workflowId,
      });
      ctx.log(
        `${schedule.label}: job ${jobId} ran ${(durationMs / 1000).toFixed(2)} s, noticed ${(latencyMs / 1000).toFixed(2)} s after its end (budget ${(budgetMs / 1000).toFixed(2)} s), ${polls.length} polls`,
      );
      figures.push(
        figure({
          scenario: 'poll-latency',
          metric: `${schedule.label}, ${seconds} s job: noticed after`,
          unit: 's',
          ours: latencyMs / 1000,
          baseline: budgetMs / 1000,
          target: schedule.target ? { on: 'ratio', op: '<=', value: 1 } : undefined,
          note: `baseline: budget max(1 s, 25 % of ${(durationMs / 1000).toFixed(1)} s); ${polls.length} polls`,
        }),
      );
    }
  }
  return { figures, details: { watchIntervalMs: WATCH_INTERVAL_MS, runs } };
};

/**
 * The activity that started the import's job and the job's id: `createTableAsync` (the job is its result), or on the
 * short path of a small file `uploadAndStartJob` (the job is its result's `job`).
 */
export function jobStart(timings: HistoryTimings): { span: ActivitySpan; jobId: number } | undefined {
  for (const span of timings.activities) {
    if (span.outcome !== 'completed') continue;
    if (span.type === 'createTableAsync') {
      const id = decode<JobSummary>(span.result)?.id;
      if (id !== undefined) return { span, jobId: id };
    } else if (span.type === 'uploadAndStartJob') {
      const id = decode<{ job?: JobSummary }>(span.result)?.job?.id;
      if (id !== undefined) return { span, jobId: id };
    }
  }
  return undefined;
}

/** The first payload of an activity's result, decoded. */
export function decode<T>(payloads: unknown): T | undefined {
  const payload = (payloads as { payloads?: unknown[] } | undefined)?.payloads?.[0];
  return payload ? defaultPayloadConverter.fromPayload<T>(payload as never) : undefined;
}

interface SeenJob {
  firstSeenMs: number;
  endMs?: number;
  status: string;
}

/** Reads the newest jobs every {@link WATCH_INTERVAL_MS} and records when each was first seen and first seen ended. */
export function watchNewJobs(stack: BenchStack): { jobs: Map<number, SeenJob>; stop(): Promise<void> } {
  const jobs = new Map<number, SeenJob>();
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const now = Date.now();
      try {
        for (const job of await stack.storage.listJobs({ limit: 3 })) {
          const id = Number(job.id);
          const seen = jobs.get(id) ?? { firstSeenMs: now, status: job.status };
          seen.status = job.status;
          if (seen.endMs === undefined && (job.status === 'success' || job.status === 'error')) seen.endMs = now;
          jobs.set(id, seen);
        }
      } catch {
        /* a missed read only lowers the resolution */
      }
      await new Promise((r) => setTimeout(r, Math.max(0, WATCH_INTERVAL_MS - (Date.now() - now))));
    }
  })();
  return {
    jobs,
    async stop() {
      stopped = true;
      await loop;
    },
  };
}
