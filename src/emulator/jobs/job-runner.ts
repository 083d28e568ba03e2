import { type DocLog } from '../doc-log';
import { JobError, newExceptionId } from '../errors';
import { type Faults } from '../faults';
import { type CreatorToken, type JobRecord } from '../model';
import { type TableStore } from '../table-store';
import { formatTimestamp, sleep } from '../time';

/** Runs one job's operation; its return value becomes `results`. A thrown {@link JobError} ends the job `error`. */
export type JobExecutor = (job: JobRecord) => Promise<unknown>;

export interface NewJob {
  operationName: string;
  operationParams: Record<string, unknown>;
  tableId: string | null;
  /** Jobs with the same key run one after another (a table id). */
  queueKey: string;
  creatorToken: CreatorToken;
  runId?: string | null;
}

export interface JobDelays {
  waitingMs: number;
  processingMs: number;
}

const JOB = 'job';

/**
 * The job queue: waiting → processing → success | error, persisted in the state log at every step. Jobs that were
 * waiting or processing when the emulator stopped are resumed at the next start; a table load that had already
 * committed (its commit marker is in DuckDB) is finished from the marker instead of being run twice.
 */
export class JobRunner {
  private readonly executors = new Map<string, JobExecutor>();
  private readonly queues = new Map<string, Promise<void>>();
  private readonly running = new Set<Promise<void>>();
  private readonly abort = new AbortController();
  private readonly finished: ((job: JobRecord) => void)[] = [];
  private closing = false;

  constructor(
    private readonly state: DocLog,
    private readonly tables: TableStore,
    private readonly faults: Faults,
    private readonly delays: JobDelays,
    private readonly nextId: () => number,
  ) {}

  register(operationName: string, executor: JobExecutor): void {
    this.executors.set(operationName, executor);
  }

  /** Called once a job ends (success or error), after it was saved; events are recorded here. */
  onFinish(listener: (job: JobRecord) => void): void {
    this.finished.push(listener);
  }

  create(input: NewJob): JobRecord {
    const job: JobRecord = {
      id: this.nextId(),
      status: 'waiting',
      operationName: input.operationName,
      operationParams: input.operationParams,
      tableId: input.tableId,
      createdTime: formatTimestamp(),
      startTime: null,
      endTime: null,
      results: null,
      error: null,
      creatorToken: input.creatorToken,
      metrics: { inCompressed: false, inBytes: 0, inBytesUncompressed: 0, outCompressed: false, outBytes: 0, outBytesUncompressed: 0 },
      queueKey: input.queueKey,
      runId: input.runId ?? null,
      createdMs: Date.now(),
    };
    this.save(job);
    this.schedule(job);
    return job;
  }

  get(id: number): JobRecord | undefined {
    return this.state.get<JobRecord>(JOB, id);
  }

  /** Newest first. */
  list(): JobRecord[] {
    return this.state.all<JobRecord>(JOB).sort((a, b) => b.id - a.id);
  }

  /** Re-queues jobs left waiting or processing by a previous run, oldest first. */
  resume(): void {
    const pending = this.state
      .all<JobRecord>(JOB)
      .filter((j) => j.status === 'waiting' || j.status === 'processing')
      .sort((a, b) => a.id - b.id);
    for (const job of pending) this.schedule(job);
  }

  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  async close(): Promise<void> {
    this.closing = true;
    this.abort.abort();
    await this.idle();
  }

  private save(job: JobRecord): void {
    this.state.put(JOB, job.id, job);
  }

  private schedule(job: JobRecord): void {
    const previous = this.queues.get(job.queueKey) ?? Promise.resolve();
    const run = previous.then(() => this.run(job));
    const tracked = run.finally(() => {
      this.running.delete(tracked);
      if (this.queues.get(job.queueKey) === run) this.queues.delete(job.queueKey);
    });
    this.queues.set(job.queueKey, run);
    this.running.add(tracked);
  }

  private async run(job: JobRecord): Promise<void> {
    if (this.closing) return;
    const signal = this.abort.signal;
    try {
      if (job.status === 'waiting') {
        const waited = Date.now() - (job.createdMs ?? Date.parse(job.createdTime.replace(/\+0000$/, 'Z')));
        await sleep(this.delays.waitingMs - waited, signal);
        if (this.closing) return;
        job.status = 'processing';
        job.startTime = formatTimestamp();
        this.save(job);
      }
      const injected = this.faults.takeJobFailure(job.operationName);
      await sleep(this.delays.processingMs + this.faults.takeJobSlowdown(job.operationName), signal);
      await this.faults.holdFor({ id: job.id, operationName: job.operationName, ...(job.tableId ? { tableId: job.tableId } : {}) }, signal);
      if (this.closing) return;
      if (injected) throw new JobError(injected.code, injected.message);
      const committed = await this.tables.jobCommit(job.id);
      const executor = this.executors.get(job.operationName);
      if (committed === undefined && !executor) {
        throw new JobError('storage.jobs.unknownOperation', `operation "${job.operationName}" cannot be run by this emulator`);
      }
      const results = committed !== undefined ? committed : await executor!(job);
      job.status = 'success';
      job.results = results ?? [];
    } catch (error) {
      job.status = 'error';
      const code = error instanceof JobError ? error.code : 'storage.jobs.internalError';
      job.error = { code, message: (error as Error).message, exceptionId: newExceptionId() };
    }
    job.startTime ??= formatTimestamp();
    job.endTime = formatTimestamp();
    this.save(job);
    for (const listener of this.finished) {
      try {
        listener(job);
      } catch {
        // A listener (the event log) must not turn a finished job into an unhandled rejection of the queue.
      }
    }
  }
}
