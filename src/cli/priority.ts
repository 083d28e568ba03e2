// The priority flags of the commands that start runs (`import`, `export`, `extract`, `schedule <verb>`), as the
// Temporal CLI names them.
import { InvalidArgumentError, type Command } from 'commander';
import type { Priority } from '@temporalio/common';
import { priorityProblems, PRIORITY_HIGHEST, PRIORITY_LOWEST } from '../contracts/priority';

/** The flags {@link addPriorityOptions} adds, as commander parses them. */
export interface PriorityFlags {
  priorityKey?: number;
  fairnessKey?: string;
  fairnessWeight?: number;
}

/** Adds `--priority-key`, `--fairness-key`, `--fairness-weight`; `defaultPriority` says what applies without the first. */
export function addPriorityOptions(command: Command, defaultPriority: string): Command {
  return command
    .option(
      '--priority-key <n>',
      `priority of the run and its activities, ${PRIORITY_HIGHEST} (first) to ${PRIORITY_LOWEST} (last) (default: ${defaultPriority})`,
      priorityKeyOf,
    )
    .option(
      '--fairness-key <key>',
      'share the task queue fairly among runs by this key (default: storage:<connection> for transfers, api:<host> for extractions)',
      fairnessKeyOf,
    )
    .option('--fairness-weight <w>', "this run's weight within its fairness key's share, 0.001 to 1000 (default 1)", fairnessWeightOf);
}

/** The priority the flags give (`fallbackKey` when `--priority-key` is absent); undefined when they give none. */
export function priorityOf(flags: PriorityFlags, fallbackKey?: number): Priority | undefined {
  const priority: Priority = {
    ...(flags.priorityKey !== undefined || fallbackKey !== undefined ? { priorityKey: flags.priorityKey ?? fallbackKey } : {}),
    ...(flags.fairnessKey !== undefined ? { fairnessKey: flags.fairnessKey } : {}),
    ...(flags.fairnessWeight !== undefined ? { fairnessWeight: flags.fairnessWeight } : {}),
  };
  return Object.keys(priority).length > 0 ? priority : undefined;
}

function checked<T>(value: T, priority: Priority): T {
  const [problem] = priorityProblems(priority);
  if (problem) throw new InvalidArgumentError(problem);
  return value;
}

function priorityKeyOf(value: string): number {
  const key = Number(value);
  if (!/^\s*\d+\s*$/.test(value))
    throw new InvalidArgumentError(`expected a whole number from ${PRIORITY_HIGHEST} to ${PRIORITY_LOWEST}, got ${JSON.stringify(value)}`);
  return checked(key, { priorityKey: key });
}

function fairnessKeyOf(value: string): string {
  return checked(value, { fairnessKey: value });
}

function fairnessWeightOf(value: string): number {
  const weight = Number(value);
  if (value.trim() === '') throw new InvalidArgumentError('expected a number from 0.001 to 1000, got ""');
  return checked(weight, { fairnessWeight: weight });
}
