/**
 * The whole `sapi-temporal` program, every command registered (the docs' generator and the tests read it). The
 * command line runs `programFor` (index.ts) instead, which registers only the command it names.
 */
import type { Command } from 'commander';
import { registerBackfillCommand } from './backfill';
import { registerCodecServerCommand } from './codec-server';
import type { CliContext } from './context';
import { normalizeOutputFlags } from './common';
import { registerControlCommands } from './control';
import { registerExportCommand } from './export';
import { registerExtractCommand } from './extract';
import { registerExtractStateCommand } from './extract-state';
import { registerImportCommand } from './import';
import { cliContext, finishProgram, hasDevKit, loadDevKit, rootProgram } from './index';
import { registerListCommand } from './list';
import { registerReceiptsCommands } from './receipts';
import { registerReplayCheckCommand } from './replay-check';
import { registerScheduleCommand } from './schedule';
import { registerStatusCommands } from './status';
import { registerWorkerCommand } from './worker';

/** Builds the `sapi-temporal` command tree; each command lives in its own file and registers itself. */
export function buildProgram(context: Partial<CliContext> = {}): Command {
  const resolved = cliContext(context);
  // -o json is --json for the commands' code
  const program = rootProgram().hook('preAction', (_program, command) => normalizeOutputFlags(command));
  registerImportCommand(program, resolved);
  registerExportCommand(program, resolved);
  registerExtractCommand(program, resolved);
  registerExtractStateCommand(program, resolved);
  registerBackfillCommand(program, resolved);
  registerStatusCommands(program, resolved);
  registerListCommand(program, resolved);
  registerReceiptsCommands(program, resolved);
  registerControlCommands(program, resolved);
  registerScheduleCommand(program, resolved);
  registerWorkerCommand(program, resolved);
  registerReplayCheckCommand(program, resolved);
  registerCodecServerCommand(program, resolved);
  const devKit = hasDevKit();
  if (devKit) loadDevKit()(program, resolved);
  return finishProgram(program, devKit);
}
