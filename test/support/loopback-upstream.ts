/**
 * A fake provider on loopback for one test file's unit tests of the core: started before them and
 * closed after, with local mode on meanwhile (the outbound guard lets a call reach loopback only
 * then) and any other environment the file asks for, put back as it was afterwards.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from './fake-upstream';

export function useLoopbackUpstream(environment: Record<string, string> = {}): { readonly upstream: FakeUpstream } {
  const settings = { GATEWAY_MODE: 'local', ...environment };
  const previous = new Map<string, string | undefined>();
  let upstream: FakeUpstream | undefined;
  beforeAll(async () => {
    for (const [name, value] of Object.entries(settings)) {
      previous.set(name, process.env[name]);
      process.env[name] = value;
    }
    upstream = await startFakeUpstream();
  });
  afterAll(async () => {
    for (const [name, value] of previous) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    await upstream?.close();
  });
  return {
    get upstream() {
      if (!upstream) throw new Error('The loopback upstream starts in beforeAll; use it inside a test.');
      return upstream;
    },
  };
}

/** A loopback port nothing listens on: one the system handed out and took back. */
export function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
