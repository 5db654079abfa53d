/**
 * Local stand-ins for DynamoDB, SQS and S3, on loopback:
 *
 * - DynamoDB: dynalite, LevelDB data under `<dataDir>/dynamodb` (survives a restart). Tables become
 *   ACTIVE at once. TransactWriteItems is answered by a stand-in (dynamo-transactions.ts). A LevelDB directory can be open in one process only: a second gateway must use
 *   the first one's emulators through `GATEWAY_*_ENDPOINT` (see emulators-main.ts).
 * - SQS: fauxqs, in memory (queues are re-created by provisioning on every start; messages are lost
 *   on restart, DynamoDB is the source of truth).
 * - S3: s3rver, objects as files under `<dataDir>/s3` (survive a restart), wrapped to work with the
 *   current SDK and to stay inside dataDir (see s3-emulator.ts).
 *
 * Nothing prints to stdout (the gateway's stdout carries request logs).
 */
import { mkdir } from 'node:fs/promises';
import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { closeServer, endpointOf, listen } from './listen';
import { addTransactions } from './dynamo-transactions';
import { startS3Emulator } from './s3-emulator';

export interface EmulatorEndpoints {
  dynamodb: string;
  sqs: string;
  s3: string;
}

export interface RunningEmulators {
  endpoints: EmulatorEndpoints;
  /** Stops what was started here (never the `use` endpoints). Safe to call more than once. */
  stop(): Promise<void>;
}

export interface StartEmulatorsOptions {
  /** Data directory (e.g. `.gateway`): DynamoDB data in `<dataDir>/dynamodb`, S3 objects in `<dataDir>/s3`. */
  dataDir: string;
  /** Interface to listen on; default 127.0.0.1. */
  host?: string;
  /** Ports per emulator; 0 (the default) picks a free port. */
  ports?: Partial<Record<keyof EmulatorEndpoints, number>>;
  /** Already running emulators to use instead of starting them (from `GATEWAY_*_ENDPOINT`). */
  use?: Partial<EmulatorEndpoints>;
}

type Service = keyof EmulatorEndpoints;
interface Started {
  endpoint: string;
  stop(): Promise<void>;
}

const SERVICES: readonly Service[] = ['dynamodb', 'sqs', 's3'];
const requireHere = createRequire(import.meta.url);

export async function startEmulators(options: StartEmulatorsOptions): Promise<RunningEmulators> {
  const host = options.host ?? '127.0.0.1';
  const dataDir = path.resolve(options.dataDir);
  const starters: Record<Service, (port: number) => Promise<Started>> = {
    dynamodb: (port) => startDynamo(path.join(dataDir, 'dynamodb'), host, port),
    sqs: (port) => startSqs(host, port),
    s3: (port) => startS3Emulator(path.join(dataDir, 's3'), host, port),
  };

  const results = await Promise.allSettled(
    SERVICES.map(async (service): Promise<Started> => {
      const given = options.use?.[service];
      if (given) return { endpoint: normaliseEndpoint(given, service), stop: async () => {} };
      return starters[service](options.ports?.[service] ?? 0);
    }),
  );
  const started = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  const failure = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (failure) {
    await Promise.allSettled(started.map((s) => s.stop()));
    throw failure.reason;
  }

  const [dynamodb, sqs, s3] = started;
  let stopping: Promise<void> | undefined;
  return {
    endpoints: { dynamodb: dynamodb.endpoint, sqs: sqs.endpoint, s3: s3.endpoint },
    stop: () =>
      (stopping ??= Promise.allSettled(started.map((s) => s.stop())).then((outcomes) => {
        const rejected = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
        if (rejected) throw rejected.reason;
      })),
  };
}

function normaliseEndpoint(value: string, service: Service): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`The ${service} endpoint '${value}' is not a URL (expected e.g. http://127.0.0.1:4566).`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error(`The ${service} endpoint '${value}' must be an http(s) URL.`);
  }
  return value.replace(/\/+$/, '');
}

// ---------------------------------------------------------------------------------------------
// DynamoDB: dynalite

async function startDynamo(dir: string, host: string, port: number): Promise<Started> {
  await mkdir(dir, { recursive: true });
  const fromDynalite = createRequire(requireHere.resolve('dynalite'));
  await assertLevelDbFree(fromDynalite, dir);
  const dynalite = fromDynalite('./index.js') as (options: Record<string, unknown>) => Server;
  // No CREATING/DELETING/UPDATING delays: provisioning on every start should take milliseconds.
  const server = dynalite({ path: dir, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  addTransactions(server);
  const endpoint = await listen(server, port, host);
  return { endpoint, stop: () => closeServer(server) };
}

/**
 * dynalite throws from its request handler (crashing the process) when its LevelDB could not be
 * opened, so check first, with dynalite's own `level`, that no other process holds the directory.
 */
async function assertLevelDbFree(fromDynalite: NodeJS.Require, dir: string): Promise<void> {
  const { Level } = fromDynalite('level') as {
    Level: new (location: string) => { open(): Promise<void>; close(): Promise<void> };
  };
  const probe = new Level(dir);
  try {
    await probe.open();
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause;
    if (cause?.code === 'LEVEL_LOCKED') {
      throw new Error(
        `The DynamoDB data in ${dir} is already open in another emulator (another gateway process?). ` +
          'Run the emulators once (lib/local/emulators/emulators-main.ts) and point every gateway at them with ' +
          'GATEWAY_DYNAMODB_ENDPOINT, GATEWAY_SQS_ENDPOINT and GATEWAY_S3_ENDPOINT, or use another data directory.',
        { cause: err },
      );
    }
    throw new Error(`Cannot open the DynamoDB data in ${dir}: ${(err as Error).message}`, { cause: err });
  } finally {
    await probe.close().catch(() => {});
  }
}

// ---------------------------------------------------------------------------------------------
// SQS: fauxqs

async function startSqs(host: string, port: number): Promise<Started> {
  const { buildApp } = await import('fauxqs');
  // buildApp rather than startFauxqs: the latter always listens on 0.0.0.0.
  const app = buildApp({ logger: false });
  await app.listen({ port, host });
  const endpoint = endpointOf(app.server.address() as AddressInfo);
  return { endpoint, stop: () => app.close() };
}
