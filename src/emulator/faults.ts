import { z } from 'zod';

/** What a matching request gets. */
export type FaultAction =
  /** Answer this status (and body; default the service's error shape) without performing the operation. */
  | { type: 'status'; status: number; body?: unknown; retryAfter?: number }
  /** Reset the TCP connection before doing anything. */
  | { type: 'reset' }
  /** Wait, then handle the request normally. */
  | { type: 'delay'; ms: number }
  /** Perform the operation, then destroy the socket instead of answering. */
  | { type: 'dropResponse' }
  /** Perform the operation, then answer `status` (default 500) with an error body. */
  | { type: 'status-after-success'; status?: number };

export interface FaultRule {
  /** HTTP method to match (case-insensitive); any when absent. */
  method?: string;
  /** Matched against the URL path (no query string): a RegExp, or a string used as a RegExp source. */
  path: string | RegExp;
  /** How many requests the rule applies to; unlimited when absent. */
  times?: number;
  /** Active for this many ms after it was added; a value above 1e12 is read as an absolute epoch-ms deadline. */
  untilMs?: number;
  action: FaultAction;
}

/** Makes the next `times` (default 1) jobs of an operation (any when absent) fail with `message`. */
export interface JobFailureRule {
  operationName?: string;
  message: string;
  code?: string;
  times?: number;
}

/** Adds `ms` to the processing time of the next `times` (default unlimited) jobs of an operation (any when absent). */
export interface JobSlowdownRule {
  operationName?: string;
  ms: number;
  times?: number;
}

/**
 * Holds the next `times` (default unlimited) jobs of an operation (any when absent) in `processing` after their
 * processing time, until `releaseJobs` lets them end: a test acts while a job runs, then releases it, instead of
 * stretching the job for a fixed time (`slowJob`).
 */
export interface JobHoldRule {
  operationName?: string;
  /** Only jobs of this table (any when absent): a run's other jobs (its load receipt's, say) are not held. */
  tableId?: string;
  times?: number;
}

/** A job the emulator holds: its id and operation. */
export interface HeldJob {
  id: number;
  operationName: string;
  tableId?: string;
}

/**
 * Makes the next `times` (default 1) temporary credentials of `access` (any when absent) claim to expire
 * `expiresInSeconds` from now: their `Expiration` says so, while the STS credentials underneath stay valid (MinIO
 * issues nothing shorter than 15 minutes). A client sees credentials about to expire, as after a long queue.
 */
export interface CredentialsExpiryRule {
  access?: 'upload' | 'read';
  expiresInSeconds: number;
  times?: number;
}

export interface FaultsController {
  /** Adds a request rule; returns its id. Rules are tried in insertion order, the first match wins. */
  add(rule: FaultRule): number;
  /** Adds a job failure rule. */
  failJob(rule: JobFailureRule): void;
  /** Adds a job slow-down rule. */
  slowJob(rule: JobSlowdownRule): void;
  /** Adds a job hold rule. */
  holdJob(rule: JobHoldRule): void;
  /**
   * Lets the held jobs of an operation (any when absent) end and removes its hold rules, so later jobs run through;
   * returns the jobs released.
   */
  releaseJobs(operationName?: string): HeldJob[];
  /** Resolves with the first job of an operation (any when absent) held now or later. */
  jobHeld(operationName?: string): Promise<HeldJob>;
  /** Adds a credentials expiry rule. */
  expireCredentials(rule: CredentialsExpiryRule): void;
  /** Removes every rule (requests, jobs and credentials) and lets every held job end. */
  clear(): void;
  /** Active request rules (for inspection). */
  list(): FaultRule[];
}

interface ActiveRule {
  id: number;
  rule: FaultRule;
  regex: RegExp;
  remaining: number;
  deadline: number;
}

const actionSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('status'),
    status: z.number().int().min(100).max(599),
    body: z.unknown().optional(),
    retryAfter: z.number().nonnegative().optional(),
  }),
  z.object({ type: z.literal('reset') }),
  z.object({ type: z.literal('delay'), ms: z.number().nonnegative() }),
  z.object({ type: z.literal('dropResponse') }),
  z.object({ type: z.literal('status-after-success'), status: z.number().int().min(100).max(599).optional() }),
]);

/** Admin endpoint payload: one rule, `{rules: [...]}`, `{failJob: {...}}` or `{slowJob: {...}}`. */
export const faultRuleSchema = z.object({
  method: z.string().optional(),
  path: z.string(),
  times: z.number().int().positive().optional(),
  untilMs: z.number().positive().optional(),
  action: actionSchema,
});
export const jobFailureSchema = z.object({
  operationName: z.string().optional(),
  message: z.string(),
  code: z.string().optional(),
  times: z.number().int().positive().optional(),
});
export const jobSlowdownSchema = z.object({
  operationName: z.string().optional(),
  ms: z.number().nonnegative(),
  times: z.number().int().positive().optional(),
});
export const jobHoldSchema = z.object({ operationName: z.string().optional(), times: z.number().int().positive().optional() });
export const jobReleaseSchema = z.object({ operationName: z.string().optional() });
export const credentialsExpirySchema = z.object({
  access: z.enum(['upload', 'read']).optional(),
  expiresInSeconds: z.number().nonnegative(),
  times: z.number().int().positive().optional(),
});

export class Faults implements FaultsController {
  private rules: ActiveRule[] = [];
  private jobFailures: (JobFailureRule & { remaining: number })[] = [];
  private jobSlowdowns: (JobSlowdownRule & { remaining: number })[] = [];
  private credentialExpiries: (CredentialsExpiryRule & { remaining: number })[] = [];
  private jobHolds: (JobHoldRule & { remaining: number })[] = [];
  private held: (HeldJob & { release: () => void })[] = [];
  private heldWaiters: { operationName?: string; resolve: (job: HeldJob) => void }[] = [];
  private nextId = 1;

  add(rule: FaultRule): number {
    const regex = rule.path instanceof RegExp ? rule.path : new RegExp(rule.path);
    const now = Date.now();
    const deadline = rule.untilMs === undefined ? Infinity : rule.untilMs > 1e12 ? rule.untilMs : now + rule.untilMs;
    const id = this.nextId++;
    this.rules.push({ id, rule, regex, remaining: rule.times ?? Infinity, deadline });
    return id;
  }

  failJob(rule: JobFailureRule): void {
    this.jobFailures.push({ ...rule, remaining: rule.times ?? 1 });
  }

  slowJob(rule: JobSlowdownRule): void {
    this.jobSlowdowns.push({ ...rule, remaining: rule.times ?? Infinity });
  }

  holdJob(rule: JobHoldRule): void {
    this.jobHolds.push({ ...rule, remaining: rule.times ?? Infinity });
  }

  releaseJobs(operationName?: string): HeldJob[] {
    this.jobHolds = this.jobHolds.filter((rule) => operationName !== undefined && rule.operationName !== operationName);
    const released = this.held.filter((job) => operationName === undefined || job.operationName === operationName);
    for (const job of released) job.release();
    return released.map(({ id, operationName: name }) => ({ id, operationName: name }));
  }

  jobHeld(operationName?: string): Promise<HeldJob> {
    const job = this.held.find((held) => operationName === undefined || held.operationName === operationName);
    if (job) return Promise.resolve({ id: job.id, operationName: job.operationName });
    return new Promise((resolve) => this.heldWaiters.push({ operationName, resolve }));
  }

  expireCredentials(rule: CredentialsExpiryRule): void {
    this.credentialExpiries.push({ ...rule, remaining: rule.times ?? 1 });
  }

  clear(): void {
    this.rules = [];
    this.jobFailures = [];
    this.jobSlowdowns = [];
    this.credentialExpiries = [];
    this.releaseJobs();
  }

  list(): FaultRule[] {
    return this.rules.map((r) => r.rule);
  }

  /** The action for this request, consuming one use of the matching rule. */
  match(method: string, path: string): FaultAction | undefined {
    const now = Date.now();
    this.rules = this.rules.filter((r) => r.remaining > 0 && r.deadline > now);
    for (const active of this.rules) {
      if (active.rule.method && active.rule.method.toUpperCase() !== method.toUpperCase()) continue;
      if (!active.regex.test(path)) continue;
      active.remaining -= 1;
      return active.rule.action;
    }
    return undefined;
  }

  /** A failure to inject into the job now starting, consuming one use. */
  takeJobFailure(operationName: string): { code: string; message: string } | undefined {
    const rule = consume(this.jobFailures, (r) => !r.operationName || r.operationName === operationName);
    return rule && { code: rule.code ?? 'storage.jobs.injectedFailure', message: rule.message };
  }

  /** Extra processing time for the job now starting, consuming one use. */
  takeJobSlowdown(operationName: string): number {
    return consume(this.jobSlowdowns, (r) => !r.operationName || r.operationName === operationName)?.ms ?? 0;
  }

  /**
   * Resolves when the job now ending may end: at once, or, when a hold rule takes it (consuming one use), once
   * `releaseJobs` (or `clear`) lets it go or `signal` aborts (the emulator closing).
   */
  holdFor(job: HeldJob, signal: AbortSignal): Promise<void> {
    if (!consume(this.jobHolds, (r) => (!r.operationName || r.operationName === job.operationName) && (!r.tableId || r.tableId === job.tableId)))
      return Promise.resolve();
    return new Promise((resolve) => {
      const entry = {
        ...job,
        release: () => {
          signal.removeEventListener('abort', entry.release);
          this.held = this.held.filter((held) => held !== entry);
          resolve();
        },
      };
      if (signal.aborted) return resolve();
      signal.addEventListener('abort', entry.release, { once: true });
      this.held.push(entry);
      const waiting = this.heldWaiters.filter((w) => w.operationName === undefined || w.operationName === job.operationName);
      this.heldWaiters = this.heldWaiters.filter((w) => !waiting.includes(w));
      for (const waiter of waiting) waiter.resolve({ ...job });
    });
  }

  /** The lifetime (seconds) the credentials now being issued should claim, consuming one use; undefined: their own. */
  takeCredentialsExpiry(access: 'upload' | 'read'): number | undefined {
    return consume(this.credentialExpiries, (r) => !r.access || r.access === access)?.expiresInSeconds;
  }
}

/** The first rule that matches, with one of its uses consumed; a used-up rule leaves the list. */
function consume<T extends { remaining: number }>(rules: T[], matches: (rule: T) => boolean): T | undefined {
  const index = rules.findIndex((r) => r.remaining > 0 && matches(r));
  if (index < 0) return undefined;
  const rule = rules[index]!;
  if (--rule.remaining <= 0) rules.splice(index, 1);
  return rule;
}
