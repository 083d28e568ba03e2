import { isPortClash, retryOnPortClash } from '../../../src/dev/ports';

describe('retryOnPortClash', () => {
  it('starts again while the failure is a port clash, up to the number of attempts', async () => {
    let calls = 0;
    const clash = () => new Error('temporal exited with code 1 during start-up:\nError: can\'t set UI port 41234: listen tcp 127.0.0.1:41234: bind: address already in use');
    await expect(retryOnPortClash(async () => (++calls < 3 ? Promise.reject(clash()) : 'up'))).resolves.toBe('up');
    expect(calls).toBe(3);
    calls = 0;
    await expect(retryOnPortClash(async () => (++calls, Promise.reject(clash())), 2)).rejects.toThrow('address already in use');
    expect(calls).toBe(2);
  });

  it('throws any other failure at once', async () => {
    let calls = 0;
    await expect(retryOnPortClash(async () => (++calls, Promise.reject(new Error('minio was not healthy within 60000 ms'))))).rejects.toThrow('not healthy');
    expect(calls).toBe(1);
  });

  it('recognises the wording of Node, Go, MinIO and the the Temporal dev server (its own port pick)', () => {
    expect(isPortClash(new Error('Error: listen EADDRINUSE: address already in use 127.0.0.1:44503'))).toBe(true);
    expect(isPortClash(new Error('listen tcp 127.0.0.1:9000: bind: address already in use'))).toBe(true);
    expect(isPortClash(new Error('FATAL Unable to start the server: Specified port is already in use'))).toBe(true);
    expect(isPortClash(new Error('temporal exited with code 2 during start-up:\npanic: failed assigning ephemeral port: failed to assign a free port: dial tcp'))).toBe(true);
    expect(isPortClash(new Error('connect ECONNREFUSED 127.0.0.1:9000'))).toBe(false);
    expect(isPortClash('EADDRINUSE')).toBe(false);
  });
});
