/**
 * Reference examples 141 (a self-signed CA in `api.caCertificate`) and 142 (a client certificate in
 * `api.#clientCertificate`, mTLS). The examples' key material is not shipped, so the test makes its own CA, server and
 * client certificates (openssl) and puts them where the examples have theirs.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseExtractorConfig } from '../../../src/extractor/config-schema';
import { createPageFetcher } from '../../../src/extractor/http/fetch-page';
import { closeCustomPools } from '../../../src/extractor/http/tls';
import { runExtraction } from '../../harness/run-extraction';
import { makeTestCertificates, type TestCertificates } from '../../harness/tls-certs';
import { exampleConfig, pointAt, sampleTables, startExampleServer, withEnvSecrets, type ExampleServer } from './ge-examples';

describe('Generic Extractor examples over https: own CA, client certificate', () => {
  let certs: TestCertificates;
  let pem: (path: string) => string;
  let selfSigned: ExampleServer;
  let mutual: ExampleServer;

  beforeAll(async () => {
    certs = makeTestCertificates(mkdtempSync(join(tmpdir(), 'ge-tls-')));
    pem = (path: string) => readFileSync(path, 'utf8');
    selfSigned = await startExampleServer({ cert: pem(certs.serverCert), key: pem(certs.serverKey) });
    mutual = await startExampleServer({
      cert: pem(certs.serverCert),
      key: pem(certs.serverKey),
      ca: pem(certs.caCert),
      requestCert: true,
      rejectUnauthorized: true,
    });
  });
  afterAll(async () => {
    await Promise.all([selfSigned?.close(), mutual?.close(), closeCustomPools()]);
  });

  /** The example with our certificates in place of its own, secrets as env references. */
  function configFor(example: string, server: ExampleServer, api: Record<string, unknown>) {
    const raw = pointAt(exampleConfig(example), server.url) as { parameters: { api: Record<string, unknown> } };
    for (const [key, value] of Object.entries(api)) {
      if (value === undefined) delete raw.parameters.api[key];
      else raw.parameters.api[key] = value;
    }
    return withEnvSecrets(raw as unknown as Record<string, unknown>);
  }

  async function run(example: string, server: ExampleServer, api: Record<string, unknown>) {
    const { config, env } = configFor(example, server, api);
    const result = await runExtraction(parseExtractorConfig(config), { fetchPage: createPageFetcher({ secrets: { env }, maxAttempts: 1 }) });
    return { result, config };
  }

  const rowsOf = (example: string) => sampleTables(example).map((t) => ({ name: t.name, columns: t.columns, rows: t.rows }));
  const tablesOf = (tables: Awaited<ReturnType<typeof runExtraction>>['tables']) =>
    Object.entries(tables).map(([name, t]) => ({ name, columns: t.columns, rows: t.rows.map((r) => t.columns.map((c) => r[c] ?? '')) }));

  test('141: a server certificate signed by api.caCertificate is trusted', async () => {
    const { result } = await run('141-https-self-signed', selfSigned, { caCertificate: pem(certs.caCert) });
    expect(tablesOf(result.tables)).toEqual(rowsOf('141-https-self-signed'));
  });

  test('141: without api.caCertificate the same server is refused (the system CAs do not know it)', async () => {
    await expect(run('141-https-self-signed', selfSigned, { caCertificate: undefined })).rejects.toThrow(/certificate/i);
  });

  test('142: the client certificate and key of api.#clientCertificate (one PEM, as an env reference) are presented', async () => {
    const { result, config } = await run('142-https-client-cert', mutual, {
      caCertificate: pem(certs.caCert),
      '#clientCertificate': `${pem(certs.clientCert)}${pem(certs.clientKey)}`,
    });
    expect(tablesOf(result.tables)).toEqual(rowsOf('142-https-client-cert'));
    expect(JSON.stringify(config)).not.toContain('PRIVATE KEY'); // the configuration only holds the reference
  });

  test('142: without the client certificate the server refuses the connection', async () => {
    await expect(run('142-https-client-cert', mutual, { caCertificate: pem(certs.caCert), '#clientCertificate': undefined })).rejects.toThrow();
  });
});
