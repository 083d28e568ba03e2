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
  /** Adds a credentials expiry rule. */
  expireCredentials(rule: CredentialsExpiryRule): void;
  /** Removes every rule (requests, jobs and credentials). */
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
  z.object({ type: z.literal('status'), status: z.number().int().min(100).max(599), body: z.unknown().optional(), retryAfter: z.number().nonnegative().optional() }),
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
export const jobFailureSchema = z.object({ operationName: z.string().optional(), message: z.string(), code: z.string().optional(), times: z.number().int().positive().optional() });
export const jobSlowdownSchema = z.object({ operationName: z.string().optional(), ms: z.number().nonnegative(), times: z.number().int().positive().optional() });
export const credentialsExpirySchema = z.object({ access: z.enum(['upload', 'read']).optional(), expiresInSeconds: z.number().nonnegative(), times: z.number().int().positive().optional() });

export class Faults implements FaultsController {
  private rules: ActiveRule[] = [];
  private jobFailures: (JobFailureRule & { remaining: number })[] = [];
  private jobSlowdowns: (JobSlowdownRule & { remaining: number })[] = [];
  private credentialExpiries: (CredentialsExpiryRule & { remaining: number })[] = [];
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

  expireCredentials(rule: CredentialsExpiryRule): void {
    this.credentialExpiries.push({ ...rule, remaining: rule.times ?? 1 });
  }

  clear(): void {
    this.rules = [];
    this.jobFailures = [];
    this.jobSlowdowns = [];
    this.credentialExpiries = [];
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
