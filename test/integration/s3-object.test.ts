/**
 * The lean GetObject and PutObject of the cache's large bodies against the S3 emulator: what they
 * write the SDK reads, and what the SDK writes they read, under keys that need encoding.
 */
import { randomBytes } from 'node:crypto';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { GatewayError } from '../../lib/core/errors';
import { openOutbound } from '../../lib/outbound/http-client';
import { resetClients, s3Client } from '../../lib/store/clients';
import { getObject, putObject } from '../../lib/store/s3-object';
import { env } from '../support/gateway-client';

// Counts the requests that leave through Node's own HTTP stack (the fallback); the SDK, loaded from
// node_modules, is not affected by the mock.
const nodeRequests = vi.hoisted(() => ({ count: 0 }));
vi.mock('node:http', async (importOriginal) => {
  const http = await importOriginal<typeof import('node:http')>();
  const request = ((...args: Parameters<typeof http.request>) => {
    nodeRequests.count++;
    return http.request(...args);
  }) as typeof http.request;
  return { ...http, request, default: { ...http, request } };
});

/** serverless.yml's DataBucket as the local runtime names it (provisioned by the shared gateway). */
const bucket = 'llm-gateway-local-000000000000-data';

const savedEnv = { ...process.env };
beforeAll(() => {
  Object.assign(process.env, { GATEWAY_MODE: 'local', GATEWAY_S3_ENDPOINT: env().endpoints.s3 });
  resetClients();
});
afterAll(() => {
  process.env = { ...savedEnv };
  resetClients();
});

const unique = () => randomBytes(6).toString('hex');
/** Characters that must be percent-encoded in a path, and some that must not be. */
const awkward = () => `lean s3/${unique()}/ünï cødé ✓ +plus=eq&amp;?q#h%25 !'()*~,;:@$[]{}^\`|<>"\\.json`;

/** toEqual walks a Buffer byte by byte: seconds for the bodies here. */
function expectObject(object: { body: Buffer; metadata: Record<string, string> } | undefined, body: Buffer, metadata: Record<string, string>): void {
  expect(object).toBeDefined();
  expect(object!.body.equals(body)).toBe(true);
  expect(object!.metadata).toEqual(metadata);
}

async function sdkRead(key: string) {
  const object = await s3Client().send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return { body: Buffer.from(await object.Body!.transformToByteArray()), metadata: object.Metadata, contentType: object.ContentType };
}

describe('getObject and putObject', () => {
  it('write what the SDK reads, under a key that needs encoding, metadata and content type included', async () => {
    const key = awkward();
    const body = randomBytes(600 * 1024);
    await putObject(bucket, key, body, { contentType: 'application/json', metadata: { 'expires-at': '1764106000123', Origin: 'lean' } });

    const read = await sdkRead(key);
    expect(read.body.equals(body)).toBe(true);
    expect(read.metadata).toEqual({ 'expires-at': '1764106000123', origin: 'lean' });
    expect(read.contentType).toBe('application/json');
    expectObject(await getObject(bucket, key), body, { 'expires-at': '1764106000123', origin: 'lean' });
  });

  it('read what the SDK writes, and a replacement of it', async () => {
    const key = awkward();
    const body = Buffer.from(`{"text":"${'ü'.repeat(200_000)}"}`);
    await s3Client().send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, Metadata: { 'expires-at': '42' } }));
    expectObject(await getObject(bucket, key), body, { 'expires-at': '42' });

    await putObject(bucket, key, Buffer.from('{}'), { metadata: { 'expires-at': '43' } });
    expectObject(await getObject(bucket, key), Buffer.from('{}'), { 'expires-at': '43' });
  });

  it('keeps an empty body and no metadata', async () => {
    const key = `lean-s3/${unique()}`;
    await putObject(bucket, key, Buffer.alloc(0));
    expectObject(await getObject(bucket, key), Buffer.alloc(0), {});
  });

  it('answers undefined for an object that is not there', async () => {
    expect(await getObject(bucket, `lean-s3/${unique()}/missing`)).toBeUndefined();
    expect(await getObject(bucket, awkward())).toBeUndefined();
  });

  it("throws with S3's error code for other error answers", async () => {
    // The emulator refuses a key with a `..` segment between backslashes (it maps keys to files).
    await expect(getObject(bucket, 'a/..\\b')).rejects.toMatchObject({ name: 'InvalidArgument', $metadata: { httpStatusCode: 400 } });
    const missingBucket = `no-such-bucket-${unique()}`;
    await expect(putObject(missingBucket, 'a', Buffer.from('x'))).rejects.toThrow(
      new RegExp(`S3 PutObject of a in ${missingBucket} failed with NoSuchBucket \\(HTTP 404\\)`),
    );
    // A 404 is a miss whatever is missing, as it was through the SDK.
    expect(await getObject(missingBucket, 'a')).toBeUndefined();
  });

  it('stops reading an object larger than it was told to hold', async () => {
    const key = `lean-s3/${unique()}`;
    await putObject(bucket, key, randomBytes(100_000));
    await expect(getObject(bucket, key, { maxBytes: 99_999 })).rejects.toMatchObject({ code: 'provider_response_too_large' });
    expect((await getObject(bucket, key, { maxBytes: 100_000 }))!.body).toHaveLength(100_000);
  });

  it('refuses keys a URL cannot carry, and metadata a header cannot, before sending anything', async () => {
    for (const key of ['', 'a/../b', './a', 'a/.', '..']) {
      await expect(getObject(bucket, key)).rejects.toThrow(/empty or has "\." or "\.\." segments/);
      await expect(putObject(bucket, key, Buffer.from('x'))).rejects.toThrow(/empty or has "\." or "\.\." segments/);
    }
    await expect(putObject(bucket, 'k', Buffer.from('x'), { metadata: { 'bad name': 'v' } })).rejects.toThrow(/metadata "bad name"/);
    await expect(putObject(bucket, 'k', Buffer.from('x'), { metadata: { note: 'ünï' } })).rejects.toThrow(/printable ASCII/);
    await expect(putObject(bucket, 'k', Buffer.from('x'), { metadata: { note: 'a\r\nx-amz-acl: public-read' } })).rejects.toThrow(/printable ASCII/);
  });

  it('sends through the gateway client, and through Node’s HTTP stack once the address guard refuses the endpoint', async () => {
    const key = awkward();
    const body = randomBytes(400 * 1024);
    const before = nodeRequests.count;
    await putObject(bucket, key, body, { metadata: { 'expires-at': '1' } });
    expectObject(await getObject(bucket, key), body, { 'expires-at': '1' });
    expect(nodeRequests.count).toBe(before);

    // Outside local mode the guard refuses loopback, where the emulator listens.
    process.env.GATEWAY_MODE = 'lambda';
    try {
      const refused = openOutbound({ url: new URL(env().endpoints.s3), method: 'GET', headers: {}, target: 'S3' }).response;
      await expect(refused).rejects.toSatisfy((error) => error instanceof GatewayError && error.code === 'custom_host_not_allowed');

      const other = randomBytes(400 * 1024);
      await putObject(bucket, key, other, { metadata: { 'expires-at': '2' } });
      expectObject(await getObject(bucket, key), other, { 'expires-at': '2' });
      expect(await getObject(bucket, `${key}-missing`)).toBeUndefined();
      await expect(putObject(`no-such-bucket-${unique()}`, 'a', Buffer.from('x'))).rejects.toMatchObject({ name: 'NoSuchBucket' });
      expect(nodeRequests.count).toBe(before + 4);
    } finally {
      process.env.GATEWAY_MODE = 'local';
    }
    // Back in local mode the environment is the same, so Node's stack keeps the requests: only a
    // change of endpoint or keys starts over.
    expect((await getObject(bucket, key))!.metadata).toEqual({ 'expires-at': '2' });
    expect(nodeRequests.count).toBe(before + 5);
    process.env.GATEWAY_S3_ENDPOINT = `${env().endpoints.s3}/`;
    expect((await getObject(bucket, key))!.metadata).toEqual({ 'expires-at': '2' });
    expect(nodeRequests.count).toBe(before + 5);
  });

  it('throws, sending nothing, without credentials and a region in the environment', async () => {
    // Without an emulator endpoint the destination is S3 in AWS. The SDK client in a function bundle
    // could find no credentials either; outside the bundles its chain could look further.
    const saved = { ...process.env };
    try {
      for (const name of ['GATEWAY_S3_ENDPOINT', 'AWS_REGION', 'AWS_DEFAULT_REGION', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN'])
        delete process.env[name];
      await expect(getObject(bucket, 'a')).rejects.toThrow(/No AWS credentials or region in the environment for S3/);
      process.env.AWS_REGION = 'eu-west-1';
      await expect(getObject(bucket, 'a')).rejects.toThrow(/No AWS credentials or region in the environment for S3/);
      await expect(putObject(bucket, 'a', Buffer.from('x'))).rejects.toThrow(/GATEWAY_S3_ENDPOINT/);
    } finally {
      process.env = saved;
    }
  });
});
