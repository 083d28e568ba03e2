import type { Command } from 'commander';
import type { CliContext, TemporalFlags } from './context';
import { addOutputOptions, addReconnectOption, addTemporalOptions, cliSettings, reconnectTimeoutMs } from './common';

/** `status` and `wait` flags as commander parses them. */
interface AttachFlags extends TemporalFlags {
  json?: boolean;
  reconnectTimeout?: number;
}

/**
 * `sapi-temporal status <workflowId>` and `sapi-temporal wait <workflowId>`: look at, or follow to its end, a
 * workflow the CLI (or a schedule) started. The Temporal client is loaded on first use, as for the run commands.
 */
export function registerStatusCommands(program: Command, context: CliContext): void {
  const request = (workflowId: string, flags: AttachFlags) => ({
    workflowId,
    settings: cliSettings(context.env, flags),
    json: flags.json ?? false,
    reconnectTimeoutMs: reconnectTimeoutMs(context.env, flags.reconnectTimeout),
  });

  addOutputOptions(
    addReconnectOption(
      addTemporalOptions(
        program
          .command('status')
          .description(
            'show a workflow: type, status (running, completed, failed, cancelled, terminated, timed out), start/close time, its progress while running, its result or failure when closed',
          )
          .argument('<workflowId>', 'the id the run command printed ("started workflow <id>")'),
      ),
    ),
    'one object on stdout',
  ).action(async (workflowId: string, flags: AttachFlags) => (await import('./attach')).showStatus(request(workflowId, flags)));

  addOutputOptions(
    addReconnectOption(
      addTemporalOptions(
        program
          .command('wait')
          .description(
            'follow a running import/export/extract workflow to its end (progress bar, Temporal outages ridden out) and print its result as the command that started it would; Ctrl-C stops waiting, the workflow runs on',
          )
          .argument('<workflowId>', 'the id the run command printed ("started workflow <id>")'),
      ),
    ),
    'one object {workflowId, runId, ...result} on stdout',
  ).action(async (workflowId: string, flags: AttachFlags) => (await import('./attach')).waitFor(request(workflowId, flags)));
}
