/**
 * The only place the gateway creates AWS SDK clients.
 *
 * On Lambda the clients take region and credentials from the function's environment (in the
 * function bundles, the SDK's default credential chain is cut down to its environment link:
 * lambda-credentials.ts). Locally, `GATEWAY_DYNAMODB_ENDPOINT`, `GATEWAY_SQS_ENDPOINT` and
 * `GATEWAY_S3_ENDPOINT` point each client at an emulator (see lib/local/emulators/emulators.ts); the region is
 * then `AWS_REGION` (or `us-east-1`) and, unless the environment carries an access key, static dummy
 * credentials are used so that no credential lookup (profile files, instance metadata) happens.
 *
 * Only the client classes are imported here; callers import the commands they send, so a function
 * bundle only contains the commands it uses. This module must stay free of local-runtime and dev
 * dependencies: every Lambda bundle includes it.
 */
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { KMSClient } from './kms';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';

/** Environment variables that switch a client to a local emulator. */
export const endpointEnv = {
  dynamodb: 'GATEWAY_DYNAMODB_ENDPOINT',
  sqs: 'GATEWAY_SQS_ENDPOINT',
  s3: 'GATEWAY_S3_ENDPOINT',
} as const;

const LOCAL_REGION = 'us-east-1';
const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

let dynamo: DynamoDBClient | undefined;
let sqs: SQSClient | undefined;
let s3: S3Client | undefined;
let kms: KMSClient | undefined;

/** Connection reuse: one keep-alive agent pair per client (the SDK's NodeHttpHandler). */
function requestHandler() {
  return {
    httpAgent: new HttpAgent({ keepAlive: true, maxSockets: 50 }),
    httpsAgent: new HttpsAgent({ keepAlive: true, maxSockets: 50 }),
  };
}

/**
 * The SDK's logger middleware redacts every command's input and output for its logger even when
 * that logger does nothing (a walk over the whole request per call: ~5% of the log-ingest CPU).
 * The gateway never logs SDK calls, so the middleware goes.
 */
function withoutSdkLogging<T extends { middlewareStack: { remove(name: string): boolean } }>(client: T): T {
  client.middlewareStack.remove('loggerMiddleware');
  return client;
}

/**
 * Settings shared by all clients in local mode, or undefined when the endpoint is not set. The lean
 * GetItem (lean-dynamo.ts) reads them too, so it signs for and talks to the same place as the client.
 */
export function localSettings(variable: string) {
  const endpoint = process.env[variable];
  if (!endpoint) return undefined;
  const hasEnvCredentials = Boolean(process.env.AWS_ACCESS_KEY_ID && process.env.AWS_SECRET_ACCESS_KEY);
  return {
    endpoint,
    region: process.env.AWS_REGION || process.env.AWS_DEFAULT_REGION || LOCAL_REGION,
    ...(hasEnvCredentials ? {} : { credentials: LOCAL_CREDENTIALS }),
    // Emulators on loopback either answer or are down; long retry ladders only hide that.
    maxAttempts: 2,
  };
}

export function dynamoClient(): DynamoDBClient {
  dynamo ??= withoutSdkLogging(new DynamoDBClient({ ...localSettings(endpointEnv.dynamodb), requestHandler: requestHandler() }));
  return dynamo;
}

export function sqsClient(): SQSClient {
  sqs ??= withoutSdkLogging(new SQSClient({ ...localSettings(endpointEnv.sqs), requestHandler: requestHandler() }));
  return sqs;
}

export function s3Client(): S3Client {
  if (!s3) {
    const local = localSettings(endpointEnv.s3);
    // Locally the bucket goes in the path (http://127.0.0.1:port/bucket/key): virtual-hosted
    // addressing would need `<bucket>.127.0.0.1` to resolve. The SDK's default checksum behaviour
    // (CRC32 headers, `aws-chunked` bodies with trailing checksums for streams) is kept, as on AWS;
    // the local S3 emulator decodes `aws-chunked` bodies itself.
    s3 = withoutSdkLogging(new S3Client({ ...local, ...(local ? { forcePathStyle: true } : {}), requestHandler: requestHandler() }));
  }
  return s3;
}

/**
 * KMS wraps the data keys of stored secrets on AWS (lib/secrets/envelope.ts). There is no local
 * emulator: in local mode a master key file wraps them instead, so this client is never created.
 * Its code loads on first use: a data key, once unwrapped, is kept, so most cold starts never call
 * KMS, and the ones that do call it once.
 */
export async function kmsClient(): Promise<KMSClient> {
  if (!kms) {
    const { KMSClient } = await import('./kms');
    kms ??= withoutSdkLogging(new KMSClient({ requestHandler: requestHandler() }));
  }
  return kms;
}

/**
 * Drops the cached clients (closing their sockets), so the next call reads the environment again.
 * The local runtime and tests use it when emulator endpoints change; Lambda code never needs it.
 */
export function resetClients(): void {
  dynamo?.destroy();
  sqs?.destroy();
  s3?.destroy();
  kms?.destroy();
  dynamo = sqs = s3 = undefined;
  kms = undefined;
}
