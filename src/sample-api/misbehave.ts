/**
 * Fault injection of the sample API: rules that make the next matching requests misbehave.
 */

/** What a misbehaving answer looks like. */
export type MisbehaviourKind =
  /** HTTP 5xx (`status`, default 500) with a JSON error body. */
  | 'server-error'
  /** HTTP 429 (or `status`, e.g. 503) with `Retry-After` (default `"1"` second; `null` sends none). */
  | 'rate-limit'
  /** An HTML error page (`status`, default 200). */
  | 'html'
  /** A 200 whose body is truncated, invalid JSON. */
  | 'invalid-json'
  /** The previous answer of the same path again, byte for byte (a pagination loop). */
  | 'repeat'
  /** The connection is destroyed without an answer. */
  | 'reset';

/** A misbehaviour rule. */
export interface MisbehaveRule {
  kind: MisbehaviourKind;
  /** How many matching requests misbehave (default 1; `Infinity` for all). */
  times?: number;
  /** Only requests whose path starts with this (default: every path). */
  path?: string;
  /** Matching requests answered normally before the rule starts (default 0). */
  after?: number;
  /** HTTP status for `server-error` (500), `rate-limit` (429) and `html` (200). */
  status?: number;
  /** `Retry-After` value for `rate-limit` (seconds or an HTTP date); `null` = no header. Default `"1"`. */
  retryAfter?: string | number | null;
  /** Active for this many ms after it was added (an outage of that length); always when absent. */
  untilMs?: number;
}

interface ActiveRule extends Required<Pick<MisbehaveRule, 'kind' | 'times' | 'after'>> {
  rule: MisbehaveRule;
  /** Epoch ms after which the rule no longer applies. */
  deadline: number;
}

/** The queue of active rules. */
export class Misbehaviour {
  private rules: ActiveRule[] = [];

  /** Adds a rule (rules are checked in the order added). */
  add(rule: MisbehaveRule): void {
    this.rules.push({
      rule,
      kind: rule.kind,
      times: rule.times ?? 1,
      after: rule.after ?? 0,
      deadline: rule.untilMs === undefined ? Infinity : Date.now() + rule.untilMs,
    });
  }

  /** Removes every rule. */
  clear(): void {
    this.rules = [];
  }

  /** The rule a request to `path` triggers (consuming one of its `times`), or undefined. */
  take(path: string): MisbehaveRule | undefined {
    for (const active of this.rules) {
      if (active.times <= 0 || Date.now() >= active.deadline) continue;
      if (active.rule.path !== undefined && !path.startsWith(active.rule.path)) continue;
      if (active.after > 0) {
        active.after--;
        continue;
      }
      active.times--;
      return active.rule;
    }
    return undefined;
  }
}

/** The HTML page sent by `kind: 'html'`. */
export const HTML_ERROR_PAGE =
  '<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head><body><h1>Bad Gateway</h1>' +
  '<p>The upstream server is temporarily unavailable. Please try again later.</p></body></html>\n';
