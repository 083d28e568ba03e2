import { type Command } from 'commander';
import type { CliContext } from './context';
import { registerDemoCommand } from './demo';
import { registerDevCommand } from './dev';
import { registerEmulatorCommand } from './emulator';

/**
 * The dev kit's commands: `emulator`, `dev` and `demo` run the Storage API emulator (DuckDB, fastify), which only
 * this workspace has. The published plugin package (`packages/sapi-temporal`) is built without this module, so its
 * CLI has the other commands only (see `registerDevKitCommands` in ./index).
 */
export function registerDevKitCommands(program: Command, context: CliContext): void {
  registerEmulatorCommand(program, context);
  registerDevCommand(program);
  registerDemoCommand(program);
}
