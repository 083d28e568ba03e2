import { createServer } from 'node:net';
import { classifyConnectionError, probeConnection, splitAddress } from '../../../src/cli/connection-probe';

const errno = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('why Temporal cannot be reached', () => {
  const plain = { address: 'temporal.example.com:7233' };
  const tls = { address: '10.0.0.5:7233', tls: { serverCACert: { path: '/etc/ca.pem' } } };

  it('names DNS, a refused port and a silent host, with the setting to change', () => {
    expect(classifyConnectionError(errno('getaddrinfo ENOTFOUND temporal.example.com', 'ENOTFOUND'), plain)).toEqual({
      cause: 'dns',
      message: 'DNS: host temporal.example.com not found (ENOTFOUND); check the host of --address / TEMPORAL_ADDRESS',
    });
    expect(classifyConnectionError(errno('connect ECONNREFUSED 127.0.0.1:7233', 'ECONNREFUSED'), plain)?.cause).toBe('refused');
    expect(classifyConnectionError(errno('probe timed out', 'PROBE_TIMEOUT'), plain)?.cause).toBe('timeout');
  });

  it('names the certificate problem: the CA given, the name, the client certificate, a server without TLS', () => {
    const ca = classifyConnectionError(errno('unable to verify the first certificate', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE'), tls);
    expect(ca).toEqual({
      cause: 'tls-ca',
      message:
        "TLS: the server's certificate is not signed by a trusted CA (unable to verify the first certificate (UNABLE_TO_VERIFY_LEAF_SIGNATURE)); the CA given (/etc/ca.pem) did not sign it: set --tls-ca-path / TEMPORAL_TLS_SERVER_CA_CERT_PATH to the server's CA",
    });
    const name = classifyConnectionError(
      errno("Hostname/IP does not match certificate's altnames: Host: a. is not in the cert's altnames: DNS:b", 'ERR_TLS_CERT_ALTNAME_INVALID'),
      tls,
    );
    expect(name?.cause).toBe('tls-hostname');
    expect(name?.message).toContain('--tls-server-name / TEMPORAL_TLS_SERVER_NAME');
    const openssl = errno(
      '80BC103F097F0000:error:0A00045C:SSL routines:ssl3_read_bytes:tlsv13 alert certificate required:../deps/openssl/openssl/ssl/record/rec_layer_s3.c:1601:SSL alert number 116',
      'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED',
    );
    const client = classifyConnectionError(openssl, tls);
    expect(client?.cause).toBe('tls-client-certificate');
    // OpenSSL's words, not its source file and line
    expect(client?.message).toContain('(tlsv13 alert certificate required (ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED))');
    expect(client?.message).not.toContain('rec_layer_s3.c');
    expect(classifyConnectionError(errno('Client network socket disconnected before secure TLS connection was established', 'ECONNRESET'), tls)?.cause).toBe(
      'tls-not-tls',
    );
    expect(classifyConnectionError(errno('certificate has expired', 'CERT_HAS_EXPIRED'), tls)?.cause).toBe('tls-expired');
    expect(classifyConnectionError(new Error('something else'), tls)).toBeUndefined();
  });

  it('splits host and port of names, IPv4 and bracketed IPv6 addresses', () => {
    expect(splitAddress('temporal:7233')).toEqual({ host: 'temporal', port: 7233 });
    expect(splitAddress('[::1]:7234')).toEqual({ host: '::1', port: 7234 });
    expect(splitAddress('temporal')).toEqual({ host: 'temporal', port: 7233 });
  });

  it('dials the address: refused on a closed port, TLS wanted when it hangs up on plain text, nothing to say when it answers', async () => {
    const hangUp = createServer((socket) => socket.destroy());
    await new Promise<void>((ready) => hangUp.listen(0, '127.0.0.1', ready));
    try {
      const diagnosis = await probeConnection({ address: `127.0.0.1:${(hangUp.address() as { port: number }).port}`, namespace: 'default' });
      expect(diagnosis?.cause).toBe('tls-required');
      expect(diagnosis?.message).toContain('as a TLS endpoint does');
    } finally {
      await new Promise((done) => hangUp.close(done));
    }
    const server = createServer((socket) => socket.on('data', () => socket.write(Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]))));
    await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
    const { port } = server.address() as { port: number };
    try {
      expect(await probeConnection({ address: `127.0.0.1:${port}`, namespace: 'default' })).toBeUndefined();
    } finally {
      await new Promise((done) => server.close(done));
    }
    expect((await probeConnection({ address: `127.0.0.1:${port}`, namespace: 'default' }))?.cause).toBe('refused');
  });
});
