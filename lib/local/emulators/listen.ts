/**
 * HTTP server plumbing shared by the local emulators (emulators.ts, s3-emulator.ts): listening on a
 * port, the endpoint a client connects to, and closing without waiting for idle keep-alive sockets.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Listens on host:port (0: a free port); resolves with the endpoint a client connects to. */
export function listen(server: Server, port: number, host: string): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(endpointOf(server.address() as AddressInfo));
    });
  });
}

/** http://host:port a client can connect to (a wildcard listen address becomes loopback). */
export function endpointOf(address: AddressInfo): string {
  let host = address.address;
  if (host === '0.0.0.0') host = '127.0.0.1';
  if (host === '::') host = '::1';
  return `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
}

/** Closes a server: idle keep-alive sockets at once, busy ones after a grace period. */
export function closeServer(server: Server, graceMs = 2000): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => server.closeAllConnections(), graceMs);
    timer.unref();
    server.close((err) => {
      clearTimeout(timer);
      if (err && (err as NodeJS.ErrnoException).code !== 'ERR_SERVER_NOT_RUNNING') reject(err);
      else resolve();
    });
    server.closeIdleConnections();
  });
}
