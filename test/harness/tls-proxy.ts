// A TLS (or mTLS) endpoint in front of a plain-text Temporal dev server, which has no TLS flags of its own:
// it terminates TLS and pipes the bytes (HTTP/2 gRPC) to the server's port.
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { createServer, type TLSSocket } from 'node:tls';

export interface TlsProxyOptions {
  /** `host:port` of the plain-text server. */
  target: string;
  /** PEM paths of the server certificate and key. */
  cert: string;
  key: string;
  /** mTLS: PEM path of the CA that must have signed the client's certificate; absent: plain TLS. */
  clientCa?: string;
}

export interface TlsProxy {
  /** `127.0.0.1:<port>` */
  address: string;
  /** Handshakes the proxy refused (mTLS without a valid client certificate). */
  refusedHandshakes: number;
  close(): Promise<void>;
}

/** Starts the proxy on a free port of 127.0.0.1. */
export async function startTlsProxy(options: TlsProxyOptions): Promise<TlsProxy> {
  const [host, port] = splitAddress(options.target);
  const sockets = new Set<Socket>();
  const server = createServer(
    {
      cert: readFileSync(options.cert),
      key: readFileSync(options.key),
      ALPNProtocols: ['h2'], // gRPC clients insist on h2
      ...(options.clientCa ? { ca: readFileSync(options.clientCa), requestCert: true, rejectUnauthorized: true } : {}),
    },
    (client: TLSSocket) => {
      const upstream = connect(port, host);
      sockets.add(client).add(upstream);
      const drop = () => {
        client.destroy();
        upstream.destroy();
        sockets.delete(client);
        sockets.delete(upstream);
      };
      client.on('error', drop).on('close', drop);
      upstream.on('error', drop).on('close', drop);
      client.pipe(upstream).pipe(client);
    },
  );
  const proxy: TlsProxy = {
    address: '',
    refusedHandshakes: 0,
    close: () =>
      new Promise<void>((done) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => done());
      }),
  };
  server.on('tlsClientError', () => (proxy.refusedHandshakes += 1));
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  const bound = server.address();
  if (bound === null || typeof bound === 'string') throw new Error('TLS proxy: no TCP address');
  proxy.address = `127.0.0.1:${bound.port}`;
  return proxy;
}

function splitAddress(address: string): [string, number] {
  const at = address.lastIndexOf(':');
  return [address.slice(0, at), Number(address.slice(at + 1))];
}
