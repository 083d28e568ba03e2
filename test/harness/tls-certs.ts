// Throwaway certificates for TLS tests, made with the machine's openssl: a CA, a server certificate for
// 127.0.0.1/localhost and a client certificate (mTLS), all signed by that CA.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Paths of the PEM files {@link makeTestCertificates} wrote. */
export interface TestCertificates {
  caCert: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** A second CA that signed nothing here: a client trusting only it must reject the server. */
  otherCaCert: string;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** Writes a CA, a server pair (SAN 127.0.0.1, localhost) and a client pair under `dir` (valid one day). */
export function makeTestCertificates(dir: string): TestCertificates {
  mkdirSync(dir, { recursive: true });
  const ca = (name: string) =>
    openssl(
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        `/CN=${name}`,
        '-keyout',
        `${name}.key`,
        '-out',
        `${name}.pem`,
        '-addext',
        'basicConstraints=critical,CA:TRUE',
        '-addext',
        'keyUsage=critical,keyCertSign,cRLSign',
      ],
      dir,
    );
  ca('test-ca');
  ca('other-ca');
  const leaf = (name: string, extensions: string) => {
    writeFileSync(join(dir, `${name}.ext`), extensions);
    openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${name}`, '-keyout', `${name}.key`, '-out', `${name}.csr`], dir);
    openssl(
      [
        'x509',
        '-req',
        '-in',
        `${name}.csr`,
        '-CA',
        'test-ca.pem',
        '-CAkey',
        'test-ca.key',
        '-CAcreateserial',
        '-days',
        '1',
        '-sha256',
        '-extfile',
        `${name}.ext`,
        '-out',
        `${name}.pem`,
      ],
      dir,
    );
  };
  leaf(
    'server',
    'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n',
  );
  leaf('client', 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n');
  return {
    caCert: join(dir, 'test-ca.pem'),
    serverCert: join(dir, 'server.pem'),
    serverKey: join(dir, 'server.key'),
    clientCert: join(dir, 'client.pem'),
    clientKey: join(dir, 'client.key'),
    otherCaCert: join(dir, 'other-ca.pem'),
  };
}
