import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { Help } from 'commander';
import { commandNameOf, programFor } from '../../../src/cli';
import { COMMAND_GROUPS, DEV_KIT_SUMMARIES } from '../../../src/cli/commands';
import { buildProgram } from '../../../src/cli/program';

const repoRoot = join(__dirname, '..', '..', '..');
const argv = (...args: string[]) => ['node', 'sapi-temporal', ...args];

describe('the CLI loads only the command it runs', () => {
  it('lists every registered command, with its arguments and description, in the order the whole program has them', () => {
    const help = new Help();
    const registered = buildProgram().commands.map((command) => ({
      name: command.name(),
      term: help.subcommandTerm(command),
      description: command.description(),
    }));
    expect([...COMMAND_GROUPS.flatMap((group) => group.commands), ...DEV_KIT_SUMMARIES]).toEqual(registered);
  });

  it('prints the same top-level help as the whole program', async () => {
    expect((await programFor(argv('--help'))).helpInformation()).toBe(buildProgram().helpInformation());
  });

  it.each([['import'], ['wait'], ['extend-deadline'], ['schedule']])('registers %s for real, with the help the whole program gives it', async (name) => {
    const lazy = (await programFor(argv(name, '--help'))).commands.find((command) => command.name() === name)!;
    const whole = buildProgram().commands.find((command) => command.name() === name)!;
    expect(lazy.helpInformation()).toBe(whole.helpInformation());
    expect(lazy.options.length).toBe(whole.options.length);
  });

  it('finds the command in the arguments: `help <command>` counts, options before it do not', () => {
    expect(commandNameOf(argv('--help'))).toBeUndefined();
    expect(commandNameOf(argv('-V'))).toBeUndefined();
    expect(commandNameOf(argv('import', 'a.csv', '--table', 'in.c-x.y'))).toBe('import');
    expect(commandNameOf(argv('help', 'export'))).toBe('export');
    expect(commandNameOf(argv('-h', 'status', 'wf-1'))).toBe('status');
  });

  it.each([['--help'], ['--version']])('%s loads neither the Temporal client, gRPC, zod nor undici', (flag) => {
    const script = `require('./src/cli').run(${JSON.stringify(argv(flag))}).then((code) => {
      const loaded = Object.keys(require.cache).filter((file) => /node_modules\\/(@temporalio|@grpc|zod|undici|protobufjs)\\//.test(file));
      process.stderr.write(JSON.stringify({ code, loaded }));
    })`;
    const child = spawnSync(process.execPath, ['-r', './scripts/ts-register.js', '-e', script], { cwd: repoRoot, encoding: 'utf8' });
    const { code, loaded } = JSON.parse(child.stderr) as { code: number; loaded: string[] };
    expect(code).toBe(0);
    expect(child.stdout).toMatch(flag === '--help' ? /^Usage: sapi-temporal/ : /^\S+\n$/);
    expect(loaded).toEqual([]);
  });
});
