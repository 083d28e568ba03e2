/**
 * The Azure SDK's own retries end with the activity attempt: a store given the attempt's deadline stops the SDK's
 * tries and waits when the attempt's budget (its deadline less the 2 s margin) ends, and fails retryable naming the
 * deadline, where without it the SDK makes every try it is configured for. A real SDK against a local server that
 * answers every request 503 (what Azure answers when busy).
 */
import * as http from 'node:http';
import { type AddressInfo } from 'node:net';
import { createContainerClient } from '../../../src/object-storage/abs-client';
import { absStore } from '../../../src/object-storage/abs-store';
import { SapiErrorCode, SapiTransferError } from '../../../src/errors';
import { DEADLINE_MARGIN_MS } from '../../../src/http/deadline';

jest.setTimeout(30_000);

describe('Azure calls bounded by the activity attempt', () => {
  let server: http.Server;
  let seen = 0;
  let connection: string;

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      seen++;
      req.resume();
      res.writeHead(503, { 'content-type': 'application/xml', 'x-ms-error-code': 'ServerBusy' });
      res.end('<?xml version="1.0" encoding="utf-8"?><Error><Code>ServerBusy</Code><Message>busy</Message></Error>');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    connection = `BlobEndpoint=http://127.0.0.1:${(server.address() as AddressInfo).port}/devstoreaccount1;SharedAccessSignature=sv=2020-08-04&sig=x`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  // 4 tries; the SDK waits (2^(n-1) - 1) x 0.5 s after try n: 0, 0.5 and 1.5 s, so the fourth try comes 2 s after the
  // first at the earliest
  const container = () =>
    createContainerClient({ SASConnectionString: connection, expiration: new Date(Date.now() + 3_600_000).toISOString() }, 'c', {
      retryOptions: { maxTries: 4, retryDelayInMs: 500, maxRetryDelayInMs: 5_000 },
    });

  it('without a deadline the SDK makes all its tries, then fails retryable with the 503', async () => {
    seen = 0;
    const store = absStore({ containerName: 'c', container: container() });
    const err = await store.put('a.csv', 'id\n1\n').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(SapiTransferError);
    expect((err as SapiTransferError).code).toBe(SapiErrorCode.UPLOAD_FAILED);
    expect((err as SapiTransferError).retryable).toBe(true);
    expect((err as SapiTransferError).message).toMatch(/503/);
    expect(seen).toBe(4);
  });

  it('with an attempt that has 1 s left after the margin, the SDK stops before its fourth try and the failure names the deadline', async () => {
    seen = 0;
    const deadline = Date.now() + DEADLINE_MARGIN_MS + 1_000;
    const store = absStore({ containerName: 'c', container: container(), deadline: () => deadline });
    const err = await store.put('a.csv', 'id\n1\n').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(SapiTransferError);
    expect((err as SapiTransferError).code).toBe(SapiErrorCode.UPLOAD_FAILED);
    expect((err as SapiTransferError).retryable).toBe(true);
    expect((err as SapiTransferError).message).toMatch(/did not end before the activity attempt's deadline/);
    expect(seen).toBeGreaterThanOrEqual(1);
    expect(seen).toBeLessThan(4);
  });

  it("a caller's own abort still wins: the failure is the caller's reason, not the deadline", async () => {
    const store = absStore({ containerName: 'c', container: container(), deadline: () => Date.now() + 60_000 });
    const controller = new AbortController();
    const reason = new Error('cancelled by the workflow');
    const put = store.put('a.csv', 'id\n1\n', 'text/csv', controller.signal);
    controller.abort(reason);
    await expect(put).rejects.toBe(reason);
  });
});
