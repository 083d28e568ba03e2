/** The HTTP client options of a configuration: validation, normalization, the reference's retry delays. */
import { parseExtractorConfig } from '../../../src/extractor/config-schema';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fetchPage, referenceRetryDelayMs } from '../../../src/extractor/http/fetch-page';
import { resolveClientSecrets } from '../../../src/extractor/http-client';
import { findClearSecrets } from '../../../src/extractor/secrets';

const base = (api: Record<string, unknown> = {}, config: Record<string, unknown> = {}, parameters: Record<string, unknown> = {}) => ({
  parameters: { api: { baseUrl: 'http://api.test/', ...api }, config: { jobs: [{ endpoint: 'users' }], ...config }, ...parameters },
});

describe('HTTP client options in the configuration', () => {
  test('without any option the client config is all defaults', () => {
    expect(parseExtractorConfig(base()).api.client).toEqual({
      retry: null,
      ignoreErrors: [],
      connectTimeoutMs: null,
      requestTimeoutMs: null,
      caCertificate: null,
      clientCertificate: null,
      awsSignature: null,
    });
  });

  test('retryConfig takes the reference defaults for what it leaves out, and the juicer 8 names', () => {
    expect(parseExtractorConfig(base({ retryConfig: { maxRetries: 3 } })).api.client.retry).toEqual({
      maxRetries: 3,
      codes: [500, 502, 503, 504, 408, 420, 429],
      retryHeader: 'Retry-After',
    });
    expect(parseExtractorConfig(base({ retryConfig: { headerName: 'X-Wait', httpCodes: [503] } })).api.client.retry).toEqual({
      maxRetries: 10,
      codes: [503],
      retryHeader: 'X-Wait',
    });
  });

  test('retryConfig.curl is refused naming the key (network errors are always retried)', () => {
    expect(() => parseExtractorConfig(base({ retryConfig: { curl: { codes: [6] } } }))).toThrow(
      /parameters\.api\.retryConfig\.curl: 'retryConfig\.curl' is not supported/,
    );
  });

  test('keys a client block does not know are refused, each named (nothing is ignored silently)', () => {
    expect(() => parseExtractorConfig(base({ retryConfig: { maxRetries: 1, retryHeaders: 'X' } }))).toThrow(
      /parameters\.api\.retryConfig\.retryHeaders: 'retryConfig\.retryHeaders' is not supported/,
    );
    expect(() => parseExtractorConfig(base({}, { http: { headers: {}, params: { a: 1 } } }))).toThrow(
      /parameters\.config\.http\.params: 'config\.http\.params' is not supported/,
    );
  });

  test('timeouts are seconds, kept in ms; ignoreErrors must be status codes', () => {
    const client = parseExtractorConfig(base({ http: { connectTimeout: 2, requestTimeout: '1.5', ignoreErrors: [404, 500] } })).api.client;
    expect([client.connectTimeoutMs, client.requestTimeoutMs, client.ignoreErrors]).toEqual([2000, 1500, [404, 500]]);
    expect(() => parseExtractorConfig(base({ http: { ignoreErrors: ['404'] } }))).toThrow(/parameters\.api\.http\.ignoreErrors\[0\]/);
  });

  test('a required header missing from config.http.headers is an error in the reference wording', () => {
    expect(() => parseExtractorConfig(base({ http: { requiredHeaders: ['X-AppKey'] } }))).toThrow(
      /parameters\.config\.http\.headers: Missing required header X-AppKey in 'config\.http\.headers'\./,
    );
  });

  test('config.http.headers replace api.http.headers of the same name; defaultOptions.headers win over both', () => {
    const headers = parseExtractorConfig(
      base({ http: { headers: { A: 'api', B: 'api' }, defaultOptions: { headers: { C: 'default' } } } }, { http: { headers: { B: 'config', C: 'config' } } }),
    ).api.http.headers;
    expect(headers).toEqual({ A: 'api', B: 'config', C: 'default' });
  });

  test('aws.signature.credentials are normalized; a missing field is named', () => {
    const creds = { accessKeyId: 'AK', '#secretKey': '${env:SAPI_SECRET_AWS}', serviceName: 'execute-api', regionName: 'eu-west-1' };
    expect(parseExtractorConfig(base({}, {}, { aws: { signature: { credentials: creds } } })).api.client.awsSignature).toEqual({
      accessKeyId: 'AK',
      secretKey: '${env:SAPI_SECRET_AWS}',
      serviceName: 'execute-api',
      regionName: 'eu-west-1',
    });
    expect(() => parseExtractorConfig(base({}, {}, { aws: { signature: { credentials: { ...creds, regionName: undefined } } } }))).toThrow(
      /parameters\.aws\.signature\.credentials\.regionName/,
    );
  });

  test('incrementalOutput defaults to false', () => {
    expect(parseExtractorConfig(base()).config.incrementalOutput).toBe(false);
    expect(parseExtractorConfig(base({}, { incrementalOutput: true })).config.incrementalOutput).toBe(true);
  });
});

describe('The reference retry delay (retryHeader)', () => {
  const now = Date.UTC(2026, 0, 1);
  test.each([
    ['seconds', '3', 1, 3000],
    ['a Unix timestamp 5 s ahead', String(now / 1000 + 5), 1, 5000],
    ['an HTTP date 2 s ahead', new Date(now + 2000).toUTCString(), 1, 2000],
    ['no header: 1 s on the first retry', undefined, 1, 1000],
    ['no header: 4 s on the third retry', undefined, 3, 4000],
    ['garbage: exponential', 'soon', 2, 2000],
  ])('%s', (_name, header, retry, expected) => {
    expect(referenceRetryDelayMs(header, retry, now)).toBe(expected);
  });
});

describe('api.http.requestTimeout', () => {
  test('bounds each attempt: a server that never answers fails as a network error after the attempts', async () => {
    // the server holds every request until the test ends: only the client's requestTimeout can end an attempt (no
    // clock is read: without the timeout this test would hang until jest's own timeout)
    const held: ServerResponse[] = [];
    const server = createServer((_req, res) => void held.push(res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/slow`;
    const client = parseExtractorConfig(base({ baseUrl: `${url}/`, http: { requestTimeout: 0.2 } })).api.client;
    expect(client.requestTimeoutMs).toBe(200);
    try {
      await expect(fetchPage({ method: 'GET', url, headers: {} }, { client, maxAttempts: 2, sleep: () => Promise.resolve() })).rejects.toMatchObject({
        code: 'SAPI_EXTRACT_NETWORK',
      });
      // both attempts were sent and given up by the client, neither answered
      expect(held).toHaveLength(2);
      expect(held.every((res) => !res.writableEnded)).toBe(true);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});

describe('secrets of the client options', () => {
  test('a clear #clientCertificate or aws #secretKey is refused by the clear-secret check, named by path', () => {
    const clear = findClearSecrets(
      base(
        { '#clientCertificate': '-----BEGIN CERTIFICATE-----' },
        {},
        { aws: { signature: { credentials: { accessKeyId: 'AK', '#secretKey': 'plain', serviceName: 's', regionName: 'r' } } } },
      ),
    );
    expect(clear).toEqual(expect.arrayContaining(['parameters.api.#clientCertificate', 'parameters.aws.signature.credentials.#secretKey']));
  });

  test('resolveClientSecrets fills a copy at send time and returns the values to scrub; the config keeps the references', () => {
    const client = parseExtractorConfig(
      base(
        { '#clientCertificate': '${env:SAPI_SECRET_PEM}' },
        {},
        { aws: { signature: { credentials: { accessKeyId: 'AK', '#secretKey': '${env:SAPI_SECRET_AWS}', serviceName: 's', regionName: 'r' } } } },
      ),
    ).api.client;
    const { client: resolved, secrets } = resolveClientSecrets(client, { env: { SAPI_SECRET_PEM: 'PEM', SAPI_SECRET_AWS: 'KEY' } });
    expect([resolved.clientCertificate, resolved.awsSignature?.secretKey, secrets.sort()]).toEqual(['PEM', 'KEY', ['KEY', 'PEM']]);
    expect([client.clientCertificate, client.awsSignature?.secretKey]).toEqual(['${env:SAPI_SECRET_PEM}', '${env:SAPI_SECRET_AWS}']);
  });
});

describe('response bodies', () => {
  test('a body sent in many chunks is read whole; one over maxBodyBytes is refused naming the limit', async () => {
    const records = Array.from({ length: 2000 }, (_, i) => ({ id: i, name: `item ${i}` }));
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const text = JSON.stringify(records);
      for (let i = 0; i < text.length; i += 1000) res.write(text.slice(i, i + 1000)); // chunked
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/items`;
    try {
      const page = await fetchPage({ method: 'GET', url, headers: {} });
      expect(page.body).toEqual(records);
      expect(page.bytes).toBe(JSON.stringify(records).length);
      await expect(fetchPage({ method: 'GET', url, headers: {} }, { maxBodyBytes: 10_000, maxAttempts: 1 })).rejects.toMatchObject({
        code: 'SAPI_EXTRACT_NETWORK',
        message: expect.stringMatching(/response body is larger than 10000 bytes/),
      });
    } finally {
      server.close();
    }
  });
});
