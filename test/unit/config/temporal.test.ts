import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliSettings } from '../../../src/cli/common';
import { describeTemporalSecurity, loadSettings, loadTemporalConnection, temporalConnectionOptions } from '../../../src/config';

describe('Temporal connection settings (envconfig)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'temporal-settings-'));
    writeFileSync(join(dir, 'ca.pem'), 'CA PEM');
    writeFileSync(join(dir, 'client.pem'), 'CLIENT PEM');
    writeFileSync(join(dir, 'client.key'), 'CLIENT KEY');
    writeFileSync(
      join(dir, 'temporal.toml'),
      [
        '[profile.default]',
        'address = "default.example.com:7233"',
        '[profile.cloud]',
        'address = "ns.acct.tmprl.cloud:7233"',
        'namespace = "ns.acct"',
        '[profile.cloud.tls]',
        `client_cert_path = "${join(dir, 'client.pem')}"`,
        `client_key_path = "${join(dir, 'client.key')}"`,
        '[profile.cloud.grpc_meta]',
        'x-team = "data"',
      ].join('\n'),
    );
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps the dev defaults when nothing is configured: localhost:7233, namespace default, plain text', () => {
    const settings = loadTemporalConnection({});
    expect(settings).toEqual({ address: 'localhost:7233', namespace: 'default' });
    expect(temporalConnectionOptions(settings).native).toEqual({ address: 'localhost:7233' });
    expect(describeTemporalSecurity(settings)).toBe('plain text');
  });

  it('turns on TLS with the server CA and server name from TEMPORAL_TLS_* and reads the CA file for both connections', () => {
    const settings = loadTemporalConnection({
      TEMPORAL_ADDRESS: 'temporal.internal:7233',
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: join(dir, 'ca.pem'),
      TEMPORAL_TLS_SERVER_NAME: 'temporal.internal',
    });
    const { native, client, namespace } = temporalConnectionOptions(settings);
    expect(namespace).toBe('default');
    expect(native).toEqual({
      address: 'temporal.internal:7233',
      tls: { serverNameOverride: 'temporal.internal', serverRootCACertificate: Buffer.from('CA PEM'), clientCertPair: undefined },
    });
    expect(client).toEqual(native);
    expect(describeTemporalSecurity(settings)).toBe('TLS');
  });

  it('sends the client certificate pair for mTLS', () => {
    const { native } = temporalConnectionOptions(
      loadTemporalConnection({ TEMPORAL_TLS_CLIENT_CERT_PATH: join(dir, 'client.pem'), TEMPORAL_TLS_CLIENT_KEY_PATH: join(dir, 'client.key') }),
    );
    expect(native.tls).toMatchObject({ clientCertPair: { crt: Buffer.from('CLIENT PEM'), key: Buffer.from('CLIENT KEY') } });
  });

  it('turns on TLS for an API key (Temporal Cloud) unless TEMPORAL_TLS=false', () => {
    const cloud = loadTemporalConnection({ TEMPORAL_ADDRESS: 'eu-west-1.aws.api.temporal.io:7233', TEMPORAL_NAMESPACE: 'ns.acct', TEMPORAL_API_KEY: 'secret' });
    expect(temporalConnectionOptions(cloud).client).toEqual({ address: 'eu-west-1.aws.api.temporal.io:7233', apiKey: 'secret', tls: true });
    expect(describeTemporalSecurity(cloud)).toBe('TLS, API key');
    const plain = temporalConnectionOptions(loadTemporalConnection({ TEMPORAL_API_KEY: 'secret', TEMPORAL_TLS: 'false' })).client;
    expect(plain.tls).toBe(false);
  });

  it('reads the profile TEMPORAL_PROFILE names from TEMPORAL_CONFIG_FILE, variables over the profile', () => {
    const env = { TEMPORAL_CONFIG_FILE: join(dir, 'temporal.toml'), TEMPORAL_PROFILE: 'cloud' };
    const settings = loadTemporalConnection(env);
    expect(settings).toMatchObject({ address: 'ns.acct.tmprl.cloud:7233', namespace: 'ns.acct', profile: 'cloud', grpcMeta: { 'x-team': 'data' } });
    expect(temporalConnectionOptions(settings).native).toMatchObject({
      metadata: { 'x-team': 'data' },
      tls: { clientCertPair: { crt: Buffer.from('CLIENT PEM') } },
    });
    expect(describeTemporalSecurity(settings)).toBe('mTLS, profile cloud');
    expect(loadTemporalConnection({ ...env, TEMPORAL_NAMESPACE: 'other' }).namespace).toBe('other');
    expect(loadTemporalConnection({ TEMPORAL_CONFIG_FILE: join(dir, 'temporal.toml') }).address).toBe('default.example.com:7233');
  });

  it('reads the standard config file under XDG_CONFIG_HOME and ignores a missing one', () => {
    const configHome = mkdtempSync(join(dir, 'xdg-'));
    expect(loadTemporalConnection({ XDG_CONFIG_HOME: configHome }).address).toBe('localhost:7233');
    const folder = join(configHome, 'temporalio');
    mkdirSync(folder);
    writeFileSync(join(folder, 'temporal.toml'), '[profile.default]\naddress = "xdg.example.com:7233"\n');
    expect(loadTemporalConnection({ XDG_CONFIG_HOME: configHome }).address).toBe('xdg.example.com:7233');
  });

  it('names the profile and the file when TEMPORAL_PROFILE is not in it', () => {
    const file = join(dir, 'temporal.toml');
    expect(() => loadTemporalConnection({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'staging' })).toThrow(
      `invalid configuration: profile staging not found in ${file} (TEMPORAL_PROFILE, --profile)`,
    );
  });

  it('names TEMPORAL_CONFIG_FILE when the file it names does not exist, with or without a profile', () => {
    const file = join(dir, 'nope.toml');
    const message = `invalid configuration: config file ${file} not found (TEMPORAL_CONFIG_FILE, --config-file); point it at your temporal.toml or unset it`;
    expect(() => loadTemporalConnection({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'staging' })).toThrow(message);
    expect(() => loadTemporalConnection({ TEMPORAL_CONFIG_FILE: file })).toThrow(message);
  });

  it('refuses a client certificate without its key', () => {
    expect(() => loadTemporalConnection({ TEMPORAL_TLS_CLIENT_CERT_PATH: join(dir, 'client.pem') })).toThrow(
      'mTLS needs both a client certificate and its key: TEMPORAL_TLS_CLIENT_CERT_PATH (or its profile key) is set, TEMPORAL_TLS_CLIENT_KEY_PATH is not',
    );
  });

  it('names the TLS file it cannot read', () => {
    const settings = loadTemporalConnection({ TEMPORAL_TLS_SERVER_CA_CERT_PATH: join(dir, 'missing.pem') });
    expect(() => temporalConnectionOptions(settings)).toThrow(`cannot read a Temporal TLS file (server CA ${join(dir, 'missing.pem')})`);
  });

  it('gives the worker settings and the CLI the same connection, the CLI flags over variables and profile', () => {
    const env = { TEMPORAL_CONFIG_FILE: join(dir, 'temporal.toml'), TEMPORAL_PROFILE: 'cloud', SAPI_URL: 'https://c.example.com', SAPI_TOKEN: 't' };
    const worker = loadSettings(env).temporal;
    expect(worker).toMatchObject({ address: 'ns.acct.tmprl.cloud:7233', namespace: 'ns.acct', taskQueue: 'sapi-temporal', profile: 'cloud' });
    expect(Object.isFrozen(worker.tls)).toBe(true);
    const cli = cliSettings({ ...env, SAPI_URL: 'not validated' }, { address: '127.0.0.1:7233', namespace: 'mine' });
    expect(cli).toMatchObject({ address: '127.0.0.1:7233', namespace: 'mine', tls: worker.tls, grpcMeta: { 'x-team': 'data' } });
  });

  it('reports an empty TEMPORAL_ADDRESS as invalid configuration', () => {
    expect(() => loadSettings({ TEMPORAL_ADDRESS: '' })).toThrow(/invalid configuration: TEMPORAL_ADDRESS/);
  });
});
