import { workflowInfo, type ActivityOptions } from '@temporalio/workflow';
import type { Priority } from '@temporalio/common';

/**
 * The priority a run gives its activities and child workflows: the run's own (they inherit its priority key and
 * weight), with `defaultKey` as fairness key when the run was started without one. Undefined when there is nothing
 * to add (the activity then inherits everything from the run); setting it changes no command a replay checks.
 */
export function runPriority(defaultKey: string | undefined): Priority | undefined {
  const own = workflowInfo().priority;
  if (own?.fairnessKey || defaultKey === undefined) return undefined;
  return { fairnessKey: defaultKey };
}

/** `options` with `priority` (when there is one). */
export function prioritized(options: ActivityOptions, priority: Priority | undefined): ActivityOptions {
  return priority ? { ...options, priority } : options;
}
