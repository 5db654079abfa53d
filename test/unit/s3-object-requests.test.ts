/**
 * What the lean GetObject and PutObject put on the wire, where the emulator would not notice a
 * mistake (it checks no signatures, and only serves path-style requests): the addresses the SDK
 * would use, and SigV4 signatures as S3 checks them, recomputed here from the received request.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getObject, objectUrl, putObject } from '../../lib/store/s3-object';

const keys = ['cache/ws_1/md-0123/abcdef', 'a b/c+d=e&f?g#h%i/ünï cødé ✓.json', '!\'()*~-_.,;:@$[]{}^`|<>"\\/x', 'trailing/', 'double//slash', '/leading'];

/** The request an S3Client would send, captured before anything leaves the process. */
async function sdkRequest(config: { region: string; endpoint?: string; forcePathStyle?: boolean }, bucket: string, key: string): Promise<URL> {
  let captured: { protocol: string; hostname: string; port?: number; path: string } | undefined;
  const client = new S3Client({
    ...config,
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
    maxAttempts: 1,
    requestHandler: {
      handle: async (request: typeof captured) => {
        captured = request;
        throw new Error('captured');
      },
    },
  });
  await expect(client.send(new GetObjectCommand({ Bucket: bucket, Key: key }))).rejects.toThrow('captured');
  client.destroy();
  const { protocol, hostname, port, path } = captured!;
  return new URL(`${protocol}//${hostname}${port ? `:${port}` : ''}${path}`);
}

describe('objectUrl', () => {
  it('addresses an object on AWS as the SDK does: virtual-hosted, or path-style for a name with dots', async () => {
    for (const region of ['eu-west-1', 'us-east-1', 'cn-north-1']) {
      for (const bucket of ['llm-gateway-prod-123456789012-data', 'abc', 'dotted.bucket.name']) {
        for (const key of keys) {
          const ours = objectUrl({ endpoint: undefined, region }, bucket, key);
          expect(ours.href, `${region} ${bucket} ${key}`).toBe((await sdkRequest({ region }, bucket, key)).href);
        }
      }
    }
    expect(objectUrl({ endpoint: undefined, region: 'eu-west-1' }, 'my-bucket', 'a b/c').href).toBe('https://my-bucket.s3.eu-west-1.amazonaws.com/a%20b/c');
  });

  it('puts the bucket in the path of a local endpoint, as the SDK with forcePathStyle does', async () => {
    for (const endpoint of ['http://127.0.0.1:4566', 'http://localhost:9000/', 'http://127.0.0.1:9000/base']) {
      for (const key of keys) {
        const ours = objectUrl({ endpoint: new URL(endpoint), region: 'us-east-1' }, 'llm-gateway-local-000000000000-data', key);
        expect(ours.href, `${endpoint} ${key}`).toBe(
          (await sdkRequest({ region: 'us-east-1', endpoint, forcePathStyle: true }, 'llm-gateway-local-000000000000-data', key)).href,
        );
      }
    }
  });
});

interface Received {
  method: string;
  /** The request target as it arrived, undecoded. */
  target: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', sessionToken: 'session/token+with=odd&chars' };
const region = 'eu-central-1';

/**
 * The signature S3 expects for a received request (AWS's SigV4 for S3, written out from its
 * documentation rather than the signer the gateway uses): the path as sent, not encoded again; the
 * signed headers, trimmed; the payload's hash as `x-amz-content-sha256` declares it.
 */
function expectedSignature(request: Received, secretAccessKey: string): { given: string; expected: string; signedHeaders: string[] } {
  const authorization = String(request.headers.authorization);
  const [, accessKey, scope, signed, given] =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/([^,]+), SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(authorization) ?? [];
  expect(accessKey, authorization).toBeDefined();
  const [date, scopeRegion, service, terminator] = scope!.split('/');
  expect([scopeRegion, service, terminator]).toEqual([region, 's3', 'aws4_request']);
  const signedHeaders = signed!.split(';');
  const [path, query = ''] = request.target.split('?');
  const canonicalRequest = [
    request.method,
    path,
    query,
    ...signedHeaders.map((name) => `${name}:${String(request.headers[name]).trim().replace(/\s+/g, ' ')}`),
    '',
    signed,
    request.headers['x-amz-content-sha256'],
  ].join('\n');
  const amzDate = String(request.headers['x-amz-date']);
  expect(amzDate.slice(0, 8)).toBe(date);
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, createHash('sha256').update(canonicalRequest).digest('hex')].join('\n');
  const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();
  const signingKey = hmac(hmac(hmac(hmac(`AWS4${secretAccessKey}`, date!), region), 's3'), 'aws4_request');
  return { given: given!, expected: createHmac('sha256', signingKey).update(stringToSign).digest('hex'), signedHeaders };
}

describe('requests as S3 checks them', () => {
  const received: Received[] = [];
  let answer = { status: 200, headers: {} as Record<string, string>, body: Buffer.alloc(0) };
  let server: Server;
  let endpoint: string;
  const savedEnv = { ...process.env };

  beforeAll(async () => {
    server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        received.push({ method: request.method!, target: request.url!, headers: request.headers, body: Buffer.concat(chunks) });
        response.writeHead(answer.status, { ...answer.headers, 'content-length': String(answer.body.length) });
        response.end(answer.body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // Credentials of the environment's own, as Lambda gives them, rather than the emulators' static ones.
    Object.assign(process.env, {
      GATEWAY_MODE: 'local',
      GATEWAY_S3_ENDPOINT: endpoint,
      AWS_REGION: region,
      AWS_ACCESS_KEY_ID: credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
      AWS_SESSION_TOKEN: credentials.sessionToken,
    });
  });
  afterAll(async () => {
    process.env = { ...savedEnv };
    await new Promise((resolve) => server.close(resolve));
  });

  it('recomputes the signatures of the SDK’s own requests (the check itself is right)', async () => {
    const client = new S3Client({ region, endpoint, forcePathStyle: true, credentials, maxAttempts: 1 });
    received.length = 0;
    answer = { status: 200, headers: {}, body: Buffer.from('x') };
    for (const key of keys) {
      await client.send(new GetObjectCommand({ Bucket: 'bucket', Key: key }));
      await client.send(new PutObjectCommand({ Bucket: 'bucket', Key: key, Body: Buffer.from('payload'), Metadata: { 'expires-at': '1' } }));
    }
    client.destroy();
    expect(received).toHaveLength(keys.length * 2);
    for (const request of received) {
      const { given, expected } = expectedSignature(request, credentials.secretAccessKey);
      expect(given, `${request.method} ${request.target}`).toBe(expected);
    }
  });

  it('signs every request as S3 checks it: path as sent, every x-amz-* header, the payload’s SHA-256', async () => {
    for (const key of keys) {
      received.length = 0;
      answer = { status: 200, headers: {}, body: Buffer.alloc(0) };
      const body = randomBytes(70_000);
      await putObject('bucket', key, body, { contentType: 'application/json', metadata: { 'Expires-At': '1764106000123', origin: 'lean' } });
      answer = { status: 200, headers: { 'x-amz-meta-expires-at': '1764106000123', 'x-amz-meta-origin': 'lean', 'content-type': 'application/json' }, body };
      const object = await getObject('bucket', key);
      expect(object!.body.equals(body)).toBe(true);
      expect(object!.metadata).toEqual({ 'expires-at': '1764106000123', origin: 'lean' });

      const [put, get] = received;
      expect(put!.method).toBe('PUT');
      expect(put!.target).toBe(objectUrl({ endpoint: new URL(endpoint), region }, 'bucket', key).pathname);
      expect(put!.body.equals(body)).toBe(true);
      expect(put!.headers['x-amz-content-sha256']).toBe(createHash('sha256').update(body).digest('hex'));
      expect(put!.headers).toMatchObject({
        'content-type': 'application/json',
        'x-amz-meta-expires-at': '1764106000123',
        'x-amz-meta-origin': 'lean',
        'x-amz-security-token': credentials.sessionToken,
      });
      expect(get!.method).toBe('GET');
      expect(get!.target).toBe(put!.target);
      expect(get!.headers['x-amz-content-sha256']).toBe(createHash('sha256').update('').digest('hex'));
      for (const request of [put!, get!]) {
        const { given, expected, signedHeaders } = expectedSignature(request, credentials.secretAccessKey);
        expect(given, `${request.method} ${key}`).toBe(expected);
        const amzHeaders = Object.keys(request.headers).filter((name) => name.startsWith('x-amz-'));
        expect(signedHeaders).toEqual(expect.arrayContaining(['host', ...amzHeaders]));
      }
    }
  });

  it('reads 403 as a missing object, as S3 answers roles without s3:ListBucket', async () => {
    answer = {
      status: 403,
      headers: { 'content-type': 'application/xml' },
      body: Buffer.from('<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>'),
    };
    expect(await getObject('bucket', 'cache/gone')).toBeUndefined();
    answer = {
      status: 404,
      headers: { 'content-type': 'application/xml' },
      body: Buffer.from('<Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>'),
    };
    expect(await getObject('bucket', 'cache/gone')).toBeUndefined();
    answer = {
      status: 503,
      headers: { 'content-type': 'application/xml' },
      body: Buffer.from('<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>'),
    };
    await expect(getObject('bucket', 'cache/busy')).rejects.toMatchObject({
      name: 'SlowDown',
      message: expect.stringMatching(/GetObject of cache\/busy in bucket failed with SlowDown \(HTTP 503\): Please reduce/),
      $metadata: { httpStatusCode: 503 },
    });
    answer = {
      status: 403,
      headers: { 'content-type': 'application/xml' },
      body: Buffer.from('<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>'),
    };
    await expect(putObject('bucket', 'cache/denied', Buffer.from('x'))).rejects.toMatchObject({ name: 'AccessDenied', $metadata: { httpStatusCode: 403 } });
  });
});
