import { ActivityFailure, defineSignal, log, proxyLocalActivities, setCurrentDetails, setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import type { SapiActivities } from '../activities';
import { asCallWaiting, CALL_WAITING_SIGNAL, type CallWaiting } from '../contracts/call-waiting';
import { attributeUpdates, baseNameOf, formatBytes, type RunAttributeValues } from '../contracts/search-attributes';

const lookUp = proxyLocalActivities<Pick<SapiActivities, 'registeredSearchAttributes'>>({
  startToCloseTimeout: '15 seconds',
  retry: { maximumAttempts: 3, initialInterval: '500 milliseconds' },
});

/** Sent by the plugin's activity interceptor when an attempt of a call failed and will be retried. */
const callWaitingSignal = defineSignal<[CallWaiting]>(CALL_WAITING_SIGNAL);

/**
 * What Temporal's UI and visibility show of one run. `open` asks which search attributes the namespace has
 * registered (a local activity: one marker event), then upserts `initial`; `set` upserts what changed (one history
 * event per change: keep it to phases and end totals); `refresh` rewrites the current details from `details()`;
 * `activities` wraps an activity proxy so every call carries a summary (`getJob #7 job 123 processing`) and brings
 * attributes and details up to date first. While a call waits an outage out (its worker signals each failed attempt
 * it reports), {@link waitingFor} says which and since when, until the call ends.
 */
export class RunView {
  private readonly sent: RunAttributeValues = {};
  private readonly calls = new Map<string, number>();
  /** Calls in flight per activity name (a waiting call is shown only while one of its name is in flight). */
  private readonly inFlight = new Map<string, number>();
  private waiting: CallWaiting | undefined;

  private constructor(
    private readonly registered: ReadonlySet<string>,
    private readonly details: () => string,
    private readonly phase: () => string,
  ) {}

  /**
   * Opens the view: one local activity (which search attributes the namespace has registered), then the first upsert
   * and details.
   */
  static async open(initial: RunAttributeValues, view: { details: () => string; phase: () => string }): Promise<RunView> {
    let registered: string[] = [];
    try {
      registered = (await lookUp.registeredSearchAttributes()).registered;
    } catch (err) {
      // never worth failing a transfer over: the run goes on without search attributes
      if (!(err instanceof ActivityFailure)) throw err;
      log.warn(`search attributes not set: could not tell which are registered (${err.cause?.message ?? err.message})`);
    }
    const run = new RunView(new Set(registered), view.details, view.phase);
    setHandler(callWaitingSignal, (value) => run.noteWaiting(value));
    run.set({ ...initial, SapiPhase: view.phase() });
    run.refresh();
    return run;
  }

  /** Calls of activity `name` made through {@link activities} so far. */
  callCount(name: string): number {
    return this.calls.get(name) ?? 0;
  }

  /** The call waiting an outage out (its last failed attempt), while it is in flight. */
  waitingFor(): CallWaiting | undefined {
    return this.waiting;
  }

  private noteWaiting(value: unknown): void {
    const waiting = asCallWaiting(value);
    // a report that comes after its call ended (or names none in flight) is old news
    if (!waiting || !this.inFlight.get(waiting.call)) return;
    this.waiting = waiting;
    this.refresh();
  }

  /** Upserts the values that differ from what was sent (and are registered). */
  set(values: RunAttributeValues): void {
    const changed: RunAttributeValues = {};
    for (const [name, value] of Object.entries(values) as [keyof RunAttributeValues, string | number | undefined][]) {
      if (value !== undefined && this.sent[name] !== value) Object.assign(changed, { [name]: value });
    }
    const updates = attributeUpdates(changed, this.registered);
    if (updates.length === 0) return;
    upsertSearchAttributes(updates);
    Object.assign(this.sent, changed);
  }

  /** The current details (markdown) from the run's state, and its phase as a search attribute. */
  refresh(): void {
    this.set({ SapiPhase: this.phase() });
    const w = this.waiting;
    setCurrentDetails(
      w
        ? `${this.details()}  \n**waiting** ${w.call} attempt ${w.attempt} (scheduled ${w.lastAttemptAt}) failed: ${w.lastFailure} (since ${w.since}${w.budgetEndsAt ? `, budget until ${w.budgetEndsAt}` : ''})`
        : this.details(),
    );
  }

  /** `proxy` with a summary on every call and the view brought up to date before it. */
  activities<A extends object>(proxy: A, describe: (name: string, input: Record<string, unknown>) => string | undefined = () => undefined): A {
    return new Proxy(proxy, {
      get: (target, name: string) => {
        const fn = (target as Record<string, { executeWithOptions(options: object, args: unknown[]): Promise<unknown> }>)[name];
        return (...args: unknown[]) => {
          const n = (this.calls.get(name) ?? 0) + 1;
          this.calls.set(name, n);
          this.refresh();
          const input = (args[0] ?? {}) as Record<string, unknown>;
          const summary = [`${name}${n > 1 ? ` #${n}` : ''}`, describe(name, input) ?? describeInput(input)].filter(Boolean).join(' ');
          this.inFlight.set(name, (this.inFlight.get(name) ?? 0) + 1);
          const ended = () => {
            const left = (this.inFlight.get(name) ?? 1) - 1;
            this.inFlight.set(name, left);
            if (left === 0 && this.waiting?.call === name) {
              this.waiting = undefined;
              this.refresh();
            }
          };
          // `then` rather than `finally`: one promise per call (a `finally` makes two more when the call settles)
          return fn.executeWithOptions({ summary: summary.slice(0, 200) }, args).then(
            (result) => {
              ended();
              return result;
            },
            (err: unknown) => {
              ended();
              throw err;
            },
          );
        };
      },
    });
  }
}

/** The fields of an activity input an operator recognises a call by (never credentials: `target` is left out). */
function describeInput(input: Record<string, unknown>): string {
  const parts: string[] = [];
  const str = (v: unknown) => (typeof v === 'string' || typeof v === 'number' ? String(v) : undefined);
  if (str(input.jobId)) parts.push(`job ${input.jobId}`);
  if (str(input.tableId)) parts.push(String(input.tableId));
  else if (str(input.bucketId)) parts.push(`${input.bucketId}${str(input.name) ? `.${input.name}` : str(input.table) ? `.${input.table}` : ''}`);
  if (str(input.fileId)) parts.push(`file ${input.fileId}`);
  if (typeof input.source === 'string') parts.push(baseNameOf(input.source));
  if (Array.isArray(input.sources)) parts.push(`${input.sources.length} file(s)`);
  if (typeof input.destination === 'string') parts.push(`→ ${baseNameOf(input.destination)}`);
  if (str(input.stateKey)) parts.push(`state ${input.stateKey}`);
  return parts.join(' ');
}

/** One line of labelled values for current details (undefined ones left out). */
export function detailLine(fields: Record<string, string | number | undefined>): string {
  return Object.entries(fields)
    .filter(([, v]) => v !== undefined && v !== '')
    .map(([k, v]) => `**${k}** ${v}`)
    .join(' · ');
}

/** Byte count for details: `12.5 MB` or `12.5 MB of 3.1 GB`. */
export function bytesText(bytes: number | undefined, total?: number): string | undefined {
  if (bytes === undefined) return undefined;
  return total !== undefined ? `${formatBytes(bytes)} of ${formatBytes(total)}` : formatBytes(bytes);
}
