/**
 * The generated references of docs/ (cli.md, configuration.md, errors.md) are what `npm run docs` writes from the
 * code: a new command, flag, setting or error code without regenerating them fails here.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { generatedDocs, docsRoot } from '../../../scripts/gen-docs';
import { renderCliReference } from '../../../scripts/gen-docs/cli';
import { variablesInCode } from '../../../scripts/gen-docs/configuration';
import { buildProgram } from '../../../src/cli/program';
import type { Command } from 'commander';

function allCommands(command: Command): Command[] {
  return [command, ...command.commands.flatMap(allCommands)];
}

describe('the generated docs', () => {
  const warnings: string[] = [];
  const docs = generatedDocs(warnings);

  it.each([...docs.keys()])('docs/%s is what `npm run docs` writes (run it and commit the result when this fails)', (name) => {
    expect(readFileSync(join(docsRoot, name), 'utf8')).toBe(docs.get(name));
  });

  it('the CLI reference names every command and every option of it', () => {
    const cli = docs.get('cli.md')!;
    for (const command of allCommands(buildProgram({ env: {} }))) {
      const path: string[] = [];
      for (let at: Command | null = command; at; at = at.parent) path.unshift(at.name());
      if (path.length > 1) expect(cli).toContain(`\`${path.join(' ')}\``);
      for (const option of command.options) expect(cli).toContain(`\`${option.flags}\``);
    }
  });

  it('the CLI reference takes in a flag or subcommand added to any command, with its default and choices', () => {
    const program = buildProgram({ env: {} });
    const schedule = program.commands.find((command) => command.name() === 'schedule')!;
    schedule.commands.find((command) => command.name() === 'list')!.option('--limit <n>', 'at most this many schedules', '50');
    schedule.command('backfill <id>').description('run the schedule for a past period').option('-o, --output <format>', 'text or json', 'text');
    const cli = renderCliReference(program);
    expect(cli).toContain('| `--limit <n>` | at most this many schedules (default: `"50"`) |');
    expect(cli).toContain('### `sapi-temporal schedule backfill`');
    expect(cli).toContain('| `-o, --output <format>` | text or json (default: `"text"`) |');
    expect(cli).toContain('[`backfill`](#sapi-temporal-schedule-backfill)');
  });

  it('the configuration reference describes every environment variable the code reads', () => {
    expect(warnings).toEqual([]);
    const configuration = docs.get('configuration.md')!;
    const inCode = variablesInCode();
    for (const name of inCode.keys()) expect(configuration).toContain(`\`${name}\``);
    // the scan finds the settings of the worker, the CLI and the dev kit
    expect([...inCode.keys()]).toEqual(expect.arrayContaining(['SAPI_PART_SIZE_MIB', 'TEMPORAL_TLS_CLIENT_CERT_PATH', 'SAPI_CODEC_KEYS', 'SAPI_CLI_RECONNECT_TIMEOUT', 'SAPI_EMULATOR_ADMIN_TOKEN']));
    expect(inCode.get('SAPI_EMULATOR_ADMIN_TOKEN')).toBe('dev kit');
    expect(inCode.get('SAPI_CODEC_KEYS')).toBe('package');
  });
});
