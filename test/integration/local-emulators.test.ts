/**
 * The local emulators (lib/local/emulators/emulators.ts) through the SDK clients the gateway uses
 * (lib/store/clients.ts): S3 round trips with the current SDK, persistence across a restart,
 * the single-process lock on the DynamoDB data, `use` mode, and the standalone entry point.
 * Self-contained: starts its own emulators in a temporary directory.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { CreateTableCommand, DescribeTableCommand, GetItemCommand, ListTablesCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import {
  CopyObjectCommand,
  CreateBucketCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import { ListQueuesCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulators, type EmulatorEndpoints, type RunningEmulators } from '../../lib/local/emulators/emulators';
import { dynamoClient, resetClients, s3Client, sqsClient } from '../../lib/store/clients';
import { repoRoot } from '../support/repo-root';

const bucket = 'emulator-test-bucket';
let root: string;
let dataDir: string;
let emulators: RunningEmulators | undefined;
const stdoutWrites: string[] = [];
const realStdoutWrite = process.stdout.write.bind(process.stdout);

function useEndpoints(endpoints: EmulatorEndpoints): void {
  process.env.GATEWAY_DYNAMODB_ENDPOINT = endpoints.dynamodb;
  process.env.GATEWAY_SQS_ENDPOINT = endpoints.sqs;
  process.env.GATEWAY_S3_ENDPOINT = endpoints.s3;
  resetClients();
}

async function bodyOf(key: string): Promise<Buffer> {
  const response = await s3Client().send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return Buffer.from(await response.Body!.transformToByteArray());
}

/** Every file under a directory, relative to it. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)));
}

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'gateway-emulators-'));
  dataDir = path.join(root, 'data');
  // Anything the emulators print to stdout would end up in the gateway's request log stream.
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    stdoutWrites.push(String(chunk));
    return (realStdoutWrite as (...args: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stdout.write;
  emulators = await startEmulators({ dataDir });
  useEndpoints(emulators.endpoints);
  await s3Client().send(new CreateBucketCommand({ Bucket: bucket }));
});

afterAll(async () => {
  process.stdout.write = realStdoutWrite;
  resetClients();
  await emulators?.stop();
  await rm(root, { recursive: true, force: true });
});

describe('startEmulators', () => {
  it('listens on loopback with one endpoint per service', () => {
    for (const endpoint of Object.values(emulators!.endpoints)) {
      expect(endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    }
    expect(new Set(Object.values(emulators!.endpoints)).size).toBe(3);
  });

  it('answers DynamoDB and SQS through the gateway clients', async () => {
    await expect(dynamoClient().send(new ListTablesCommand({}))).resolves.toMatchObject({ TableNames: [] });
    await expect(sqsClient().send(new ListQueuesCommand({}))).resolves.toBeDefined();
  });
});

describe('S3 emulator with the current SDK', () => {
  it('round-trips a binary body byte for byte', async () => {
    const body = Buffer.from(Array.from({ length: 1024 }, (_, i) => i % 256));
    await s3Client().send(new PutObjectCommand({ Bucket: bucket, Key: 'binary/all-bytes.bin', Body: body, ContentType: 'application/octet-stream' }));
    expect((await bodyOf('binary/all-bytes.bin')).equals(body)).toBe(true);
  });

  it('round-trips a 10 MB body', async () => {
    const body = randomBytes(10 * 1024 * 1024);
    await s3Client().send(new PutObjectCommand({ Bucket: bucket, Key: 'big/ten-megabytes.bin', Body: body }));
    const head = await s3Client().send(new HeadObjectCommand({ Bucket: bucket, Key: 'big/ten-megabytes.bin' }));
    expect(head.ContentLength).toBe(body.length);
    expect((await bodyOf('big/ten-megabytes.bin')).equals(body)).toBe(true);
  });

  it('stores stream bodies the SDK sends aws-chunked with a trailing checksum as their plain bytes', async () => {
    const parts = [randomBytes(70_000), Buffer.from('\r\n0\r\n\r\n'), randomBytes(5)];
    const body = Buffer.concat(parts);
    await s3Client().send(new PutObjectCommand({ Bucket: bucket, Key: 'stream/chunked.bin', Body: Readable.from(parts), ContentLength: body.length }));
    expect((await bodyOf('stream/chunked.bin')).equals(body)).toBe(true);
    const head = await s3Client().send(new HeadObjectCommand({ Bucket: bucket, Key: 'stream/chunked.bin' }));
    expect(head.ContentEncoding).toBeUndefined();
  });

  it('keeps content type and user metadata, lists by prefix and deletes', async () => {
    await s3Client().send(
      new PutObjectCommand({ Bucket: bucket, Key: 'list/a.json', Body: '{"a":1}', ContentType: 'application/json', Metadata: { purpose: 'batch' } }),
    );
    await s3Client().send(new PutObjectCommand({ Bucket: bucket, Key: 'list/b.json', Body: '{"b":2}' }));
    await s3Client().send(new PutObjectCommand({ Bucket: bucket, Key: 'list/sub/c.json', Body: '{}' }));

    const head = await s3Client().send(new HeadObjectCommand({ Bucket: bucket, Key: 'list/a.json' }));
    expect(head.ContentType).toBe('application/json');
    expect(head.Metadata).toEqual({ purpose: 'batch' });

    const listed = await s3Client().send(new ListObjectsV2Command({ Bucket: bucket, Prefix: 'list/', Delimiter: '/' }));
    expect(listed.Contents?.map((o) => [o.Key, o.Size])).toEqual([
      ['list/a.json', 7],
      ['list/b.json', 7],
    ]);
    expect(listed.CommonPrefixes?.map((p) => p.Prefix)).toEqual(['list/sub/']);

    await s3Client().send(new DeleteObjectCommand({ Bucket: bucket, Key: 'list/a.json' }));
    await expect(bodyOf('list/a.json')).rejects.toMatchObject({ name: 'NoSuchKey' });
    await s3Client().send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: [{ Key: 'list/b.json' }, { Key: 'list/sub/c.json' }] } }));
    const after = await s3Client().send(new ListObjectsV2Command({ Bucket: bucket, Prefix: 'list/' }));
    expect(after.KeyCount ?? 0).toBe(0);
  });

  it('refuses keys that would escape the data directory', async () => {
    for (const Key of ['../../outside.txt', 'a/../../../outside.txt']) {
      await expect(s3Client().send(new PutObjectCommand({ Bucket: bucket, Key, Body: 'x' }))).rejects.toMatchObject({
        $metadata: { httpStatusCode: 400 },
      });
    }
    await expect(
      s3Client().send(new CopyObjectCommand({ Bucket: bucket, Key: 'copied', CopySource: `${bucket}/../../../etc/hostname` })),
    ).rejects.toMatchObject({ $metadata: { httpStatusCode: 400 } });
    // The SDK sends '%' as %25: "a/%2e%2e/b" is an ordinary key with a literal "%2e%2e" segment.
    await s3Client().send(new PutObjectCommand({ Bucket: bucket, Key: 'a/%2e%2e/b', Body: 'x' }));
    expect((await bodyOf('a/%2e%2e/b')).toString()).toBe('x');
    expect(readdirSync(root)).toEqual(['data']);
    expect(filesUnder(root).filter((file) => file.includes('outside'))).toEqual([]);
  });

  it('writes only inside the data directory, DynamoDB under dynamodb/ and objects under s3/', () => {
    const files = filesUnder(root);
    expect(files.every((file) => file.startsWith(`data${path.sep}dynamodb${path.sep}`) || file.startsWith(`data${path.sep}s3${path.sep}`))).toBe(true);
    expect(files.some((file) => file.startsWith(path.join('data', 's3', bucket)))).toBe(true);
    expect(files.some((file) => file.endsWith('.tmp'))).toBe(false);
  });

  it('printed nothing to stdout', () => {
    expect(stdoutWrites.join('')).toBe('');
  });
});

describe('persistence and sharing', () => {
  it('refuses to open the DynamoDB data a running emulator holds, without crashing', async () => {
    await expect(startEmulators({ dataDir })).rejects.toThrow(/already open in another emulator/);
    // The running ones are unaffected.
    await expect(dynamoClient().send(new ListTablesCommand({}))).resolves.toBeDefined();
  });

  it('keeps DynamoDB items and S3 objects across stop and start', async () => {
    await dynamoClient().send(
      new CreateTableCommand({
        TableName: 'persisted',
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      }),
    );
    // As on AWS, a new table is CREATING for a moment (here one timer tick).
    while ((await dynamoClient().send(new DescribeTableCommand({ TableName: 'persisted' }))).Table?.TableStatus !== 'ACTIVE') {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await dynamoClient().send(new PutItemCommand({ TableName: 'persisted', Item: { pk: { S: 'k1' }, value: { N: '42' } } }));
    const object = randomBytes(4096);
    await s3Client().send(new PutObjectCommand({ Bucket: bucket, Key: 'persisted/object.bin', Body: object }));

    await emulators!.stop();
    emulators = await startEmulators({ dataDir });
    useEndpoints(emulators.endpoints);

    const { Item } = await dynamoClient().send(new GetItemCommand({ TableName: 'persisted', Key: { pk: { S: 'k1' } } }));
    expect(Item).toEqual({ pk: { S: 'k1' }, value: { N: '42' } });
    expect((await bodyOf('persisted/object.bin')).equals(object)).toBe(true);
    expect((await bodyOf('big/ten-megabytes.bin')).length).toBe(10 * 1024 * 1024);
  });

  it('starts nothing and writes nothing in `use` mode', async () => {
    const unused = path.join(root, 'not-created');
    const given = { dynamodb: 'http://127.0.0.1:1/', sqs: 'http://127.0.0.1:2', s3: 'http://localhost:3' };
    const shared = await startEmulators({ dataDir: unused, use: given });
    expect(shared.endpoints).toEqual({ dynamodb: 'http://127.0.0.1:1', sqs: 'http://127.0.0.1:2', s3: 'http://localhost:3' });
    await shared.stop();
    expect(existsSync(unused)).toBe(false);
  });

  it('mixes given and started emulators', async () => {
    const mixedDir = path.join(root, 'mixed');
    const mixed = await startEmulators({ dataDir: mixedDir, use: { dynamodb: emulators!.endpoints.dynamodb } });
    try {
      expect(mixed.endpoints.dynamodb).toBe(emulators!.endpoints.dynamodb);
      expect(mixed.endpoints.s3).not.toBe(emulators!.endpoints.s3);
      expect(existsSync(path.join(mixedDir, 'dynamodb'))).toBe(false);
      expect(existsSync(path.join(mixedDir, 's3'))).toBe(true);
    } finally {
      await mixed.stop();
    }
  });

  it('rejects a `use` endpoint that is not a URL', async () => {
    await expect(startEmulators({ dataDir: path.join(root, 'bad'), use: { sqs: 'localhost:4566' } })).rejects.toThrow(/not a URL|http/);
  });
});

describe('emulators-main', () => {
  it('prints one JSON line of endpoints, serves them, and stops cleanly on SIGTERM', async () => {
    const mainDir = path.join(root, 'main');
    const child = spawn(process.execPath, ['--import', 'tsx', path.join('lib', 'local', 'emulators', 'emulators-main.ts'), '--data-dir', mainDir], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const endpoints = await new Promise<EmulatorEndpoints>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no endpoints within 20 s; stderr: ${stderr}`)), 20_000);
        child.stdout.on('data', () => {
          if (!stdout.includes('\n')) return;
          clearTimeout(timer);
          resolve(JSON.parse(stdout.split('\n')[0]) as EmulatorEndpoints);
        });
        void exited.then((code) => reject(new Error(`exited with ${code}; stderr: ${stderr}`)));
      });
      expect(Object.keys(endpoints).sort()).toEqual(['dynamodb', 's3', 'sqs']);

      useEndpoints(endpoints);
      await s3Client().send(new CreateBucketCommand({ Bucket: 'from-main' }));
      await s3Client().send(new PutObjectCommand({ Bucket: 'from-main', Key: 'k', Body: 'v' }));
      await expect(dynamoClient().send(new ListTablesCommand({}))).resolves.toMatchObject({ TableNames: [] });
      await expect(sqsClient().send(new ListQueuesCommand({}))).resolves.toBeDefined();
      resetClients();

      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(stdout.trim().split('\n')).toHaveLength(1);
      expect(existsSync(path.join(mainDir, 's3', 'from-main'))).toBe(true);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      useEndpoints(emulators!.endpoints);
    }
  });

  it('is what `npm run --silent emulators -- --data-dir <dir>` starts: its first stdout line is the endpoints', async () => {
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    // A process group of its own, so npm and the emulators behind it stop together.
    const child = spawn(npm, ['run', '--silent', 'emulators', '--', '--data-dir', path.join(root, 'npm-run')], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    try {
      const firstLine = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no endpoints within 30 s; stderr: ${stderr}`)), 30_000);
        child.stdout.on('data', () => {
          if (!stdout.includes('\n')) return;
          clearTimeout(timer);
          resolve(stdout.split('\n')[0]!);
        });
        void exited.then(() => reject(new Error(`exited early; stderr: ${stderr}`)));
      });
      const endpoints = JSON.parse(firstLine) as EmulatorEndpoints;
      expect(Object.keys(endpoints).sort()).toEqual(['dynamodb', 's3', 'sqs']);
      useEndpoints(endpoints);
      await expect(dynamoClient().send(new ListTablesCommand({}))).resolves.toMatchObject({ TableNames: [] });
      resetClients();
    } finally {
      process.kill(-child.pid!, 'SIGTERM');
      await exited;
      useEndpoints(emulators!.endpoints);
    }
  }, 40_000);
});
