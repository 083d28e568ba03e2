import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { DEV_KIT_COMMANDS, registerDevKitHints, run, wantsJson } from '../../../src/cli';
import { buildProgram } from '../../../src/cli/program';
import { cliSettings } from '../../../src/cli/common';
import { envPreset, parseEnvFile } from '../../../src/cli/env-preset';
import type { TransferRun, TransferRunner } from '../../../src/cli/context';
import { temporalConnectionOptions } from '../../../src/config';

/** Parses a command line with a recorder in place of the workflow runner; nothing connects anywhere. */
async function parse(args: string[], env: NodeJS.ProcessEnv = {}): Promise<TransferRun> {
  const runs: TransferRun[] = [];
  const record: TransferRunner = async (transfer) => void runs.push(transfer as unknown as TransferRun);
  await buildProgram({ env, runTransfer: record }).parseAsync(args, { from: 'user' });
  return runs[0]!;
}

/** Every command of the tree with its full name (`schedule trigger`). */
function commandsOf(command: Command, path: string[] = []): Array<[string, Command]> {
  return command.commands.flatMap((sub) => {
    const name = [...path, sub.name()];
    return sub.commands.length ? commandsOf(sub, name) : [[name.join(' '), sub] as [string, Command]];
  });
}

const TEMPORAL_COMMANDS = [
  'import',
  'export',
  'extract',
  'status',
  'wait',
  'list',
  'worker',
  'replay-check',
  'pause',
  'resume',
  'cancel',
  'limit',
  'extend-deadline',
  'schedule import',
  'schedule export',
  'schedule extract',
  'schedule list',
  'schedule describe',
  'schedule trigger',
  'schedule pause',
  'schedule unpause',
  'schedule delete',
];
const CONNECTION_FLAGS = [
  '--address',
  '--namespace',
  '--api-key',
  '--tls',
  '--tls-cert-path',
  '--tls-key-path',
  '--tls-ca-path',
  '--tls-server-name',
  '--tls-disable-host-verification',
  '--profile',
  '--config-file',
  '--env',
  '--env-file',
];

describe("the Temporal CLI's connection and output flags", () => {
  let dir: string;
  let stderr: jest.SpyInstance;
  let stdout: jest.SpyInstance;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'cli-flags-'));
    stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    stdout = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
  });
  afterEach(() => {
    stderr.mockRestore();
    stdout.mockRestore();
    rmSync(dir, { recursive: true, force: true });
  });

  it('offers every connection flag and -o/--json on every command that talks to Temporal, schedule subcommands included', () => {
    const commands = new Map(commandsOf(buildProgram()));
    for (const name of TEMPORAL_COMMANDS) {
      const command = commands.get(name);
      expect(command).toBeDefined();
      const flags = command!.options.map((option) => option.long);
      expect({ name, missing: CONNECTION_FLAGS.filter((flag) => !flags.includes(flag)) }).toEqual({ name, missing: [] });
      if (name !== 'worker') expect({ name, output: flags.includes('--output') && flags.includes('--json') }).toEqual({ name, output: true });
    }
  });

  it('turns the TLS, API key and profile flags into the settings their variables give, flags winning over variables', async () => {
    const transfer = await parse(
      [
        'export',
        'in.c-a.t',
        'out.csv',
        '--api-key',
        'k-flag',
        '--tls-ca-path',
        '/ca.pem',
        '--tls-cert-path',
        '/c.pem',
        '--tls-key-path',
        '/k.pem',
        '--tls-server-name',
        'temporal.internal',
        '-n',
        'ns-flag',
      ],
      { TEMPORAL_API_KEY: 'k-env', TEMPORAL_NAMESPACE: 'ns-env', HOME: dir },
    );
    expect(transfer.settings).toMatchObject({
      namespace: 'ns-flag',
      apiKey: 'k-flag',
      tls: { serverName: 'temporal.internal', serverCACert: { path: '/ca.pem' }, clientCert: { path: '/c.pem' }, clientKey: { path: '/k.pem' } },
    });
  });

  it('reads --profile from --config-file, and --no-tls turns TLS off under an API key', () => {
    const file = join(dir, 'temporal.toml');
    writeFileSync(file, '[profile.prod]\naddress = "prod.example.com:7233"\nnamespace = "prod-ns"\n');
    expect(cliSettings({ HOME: dir }, { profile: 'prod', configFile: file })).toMatchObject({
      address: 'prod.example.com:7233',
      namespace: 'prod-ns',
      profile: 'prod',
    });
    const plain = cliSettings({ HOME: dir }, { apiKey: 'k', tls: false });
    expect(plain.tls).toMatchObject({ disabled: true });
  });

  it('names the missing config file and the missing profile, with the same code from every command', async () => {
    const missing = join(dir, 'nope.toml');
    for (const args of [['status', 'x'], ['schedule', 'trigger', 's'], ['list']]) {
      expect(await run(['node', 'sapi-temporal', ...args, '--config-file', missing, '-o', 'json'], { env: { HOME: dir } })).toBe(1);
    }
    const printed = stdout.mock.calls.map(([chunk]) => JSON.parse(String(chunk)) as { error: { code: string; message: string } });
    expect(printed).toHaveLength(3);
    for (const { error } of printed) {
      expect(error.code).toBe('SAPI_INVALID_INPUT');
      expect(error.message).toContain(`config file ${missing} not found`);
      expect(error.message).not.toContain('not a profile');
    }
  });

  it('takes the --env preset of temporal.yaml as defaults: flags win over it, it wins over the variables', async () => {
    const file = join(dir, 'temporal.yaml');
    writeFileSync(
      file,
      'env:\n    default:\n        address: default.example.com:7233\n    prod:\n        address: prod.example.com:7233\n        namespace: "prod-ns"\n        tls-ca-path: /ca.pem\n        tls-disable-host-verification: true\n',
    );
    expect(cliSettings({ TEMPORAL_ADDRESS: 'env.example.com:1', HOME: dir }, { env: 'prod', envFile: file, namespace: 'flag-ns' })).toMatchObject({
      address: 'prod.example.com:7233',
      namespace: 'flag-ns',
      tls: { serverCACert: { path: '/ca.pem' } },
      disableHostVerification: true,
    });
    // the default preset applies unasked when the file has one (as for `temporal`), TEMPORAL_ENV names another
    expect(cliSettings({ HOME: dir }, { envFile: file }).address).toBe('default.example.com:7233');
    expect(cliSettings({ HOME: dir, TEMPORAL_ENV: 'prod' }, { envFile: file }).address).toBe('prod.example.com:7233');
    expect(() => envPreset({ HOME: dir }, { env: 'staging', envFile: file })).toThrow(`env staging not found in ${file} (it has default, prod)`);
    expect(() => envPreset({ HOME: dir }, { env: 'prod' })).toThrow('env prod not found: no env file');
    expect(envPreset({ HOME: dir }, {})).toEqual({});
  });

  it('parses the presets file as `temporal env set` writes it, quoted values and comments included', () => {
    expect(parseEnvFile('# presets\nenv:\n  a:\n    address: \'h:1\' # here\n    api-key: "x\\"y"\n  b: {}\nother: 1\n')).toEqual({
      a: { address: 'h:1', 'api-key': 'x"y' },
      b: {},
    });
    expect(() => parseEnvFile('env:\n  a: 1\n')).toThrow('line 2: env a must be a mapping');
  });

  it('checks the CA but not the name of the server with --tls-disable-host-verification (client connections), the API key as its header', () => {
    const options = temporalConnectionOptions({ address: 'h:1', namespace: 'n', apiKey: 'k', disableHostVerification: true });
    expect(options.client).toMatchObject({ address: 'h:1', metadata: { Authorization: 'Bearer k' } });
    expect(options.client.credentials).toBeDefined();
    expect(options.client.apiKey).toBeUndefined();
    // without TLS it changes nothing
    expect(temporalConnectionOptions({ address: 'h:1', namespace: 'n', disableHostVerification: true }).client).toEqual({ address: 'h:1' });
  });

  it('treats -o json as --json for run commands, and refuses --json with -o text', async () => {
    expect((await parse(['import', 'x.csv', '--bucket', 'in.c-a', '--table', 't', '-o', 'json'])).json).toBe(true);
    expect((await parse(['import', 'x.csv', '--bucket', 'in.c-a', '--table', 't', '--output=text'])).json).toBe(false);
    expect(await run(['node', 'sapi-temporal', 'status', 'x', '--json', '-o', 'text'])).toBe(2);
    expect(String(stderr.mock.calls.at(-2)?.[0])).toContain('--json and -o text contradict each other');
  });

  it('prints a usage error as the wrong thing and where the help is, exit 2, not the whole help', async () => {
    expect(await run(['node', 'sapi-temporal', 'schedule', 'trigger', '--bogus', 'x'])).toBe(2);
    const printed = stderr.mock.calls.map(([chunk]) => String(chunk)).join('');
    expect(printed).toBe("error: unknown option '--bogus'\n(see `sapi-temporal schedule trigger --help`)\n");
  });

  it('finds -o json wherever it is written on the command line, before a --', () => {
    for (const args of [['--json'], ['-o', 'json'], ['-ojson'], ['--output', 'json'], ['--output=json']])
      expect(wantsJson(['node', 'x', 'status', 'id', ...args])).toBe(true);
    expect(wantsJson(['node', 'x', 'status', 'id', '-o', 'text'])).toBe(false);
    expect(wantsJson(['node', 'x', 'status', '--', '--json'])).toBe(false);
  });
});

describe('the installed package without the dev kit', () => {
  it('says where dev, demo and emulator live instead of "unknown command"', async () => {
    for (const name of DEV_KIT_COMMANDS) {
      const program = new Command('sapi-temporal').exitOverride();
      registerDevKitHints(program);
      await expect(program.parseAsync(['node', 'sapi-temporal', name, '--backend', 'aws'])).rejects.toThrow(
        new RegExp(`\`${name}\` is part of the repository's dev kit, not of the installed package: .*make ${name}`),
      );
    }
  });
});
