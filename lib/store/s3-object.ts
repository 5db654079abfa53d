/**
 * GetObject and PutObject without the AWS SDK, for the response cache's large bodies. The S3 client
 * with its XML protocol, checksum and S3-specific middleware was about a quarter of every inference
 * bundle, which needs nothing of S3 but these two calls; the purge's DeleteObjects (the control
 * function's) still goes through the SDK.
 *
 * Requests go where `s3Client()` sends its own, signed with the credentials that client uses in the
 * function bundles (lean-aws-request.ts). Locally the bucket is the path's first segment
 * (`http://127.0.0.1:port/<bucket>/<key>`, as the client's `forcePathStyle`). On AWS it is the
 * host, `https://<bucket>.s3.<region>.amazonaws.com/<key>`: AWS is retiring path-style addressing
 * (new buckets may not get it), while every bucket answers virtual-hosted requests. A bucket name
 * with dots would not match the wildcard TLS certificate, so such a name goes in the path of the
 * regional endpoint, as the SDK does it. When the outbound address guard refuses the endpoint (an
 * S3 interface endpoint's private address, say), requests go over Node's own HTTP stack instead.
 *
 * No retry ladder: one more attempt only when the connection fails before an answer.
 */
import { readBody } from '../core/read-body';
import type { OutboundResponse } from '../outbound/http-client';
import { LeanAwsClient, regionalHost, type LeanAwsDestination, type LeanAwsRequest } from './lean-aws-request';

export interface StoredObject {
  body: Buffer;
  /** The object's user metadata, names in lower case (as S3 gives them back). */
  metadata: Record<string, string>;
}

export interface PutObjectOptions {
  contentType?: string;
  /** User metadata: names are sent (and come back) in lower case; values must be printable ASCII. */
  metadata?: Record<string, string>;
}

export interface GetObjectOptions {
  /** The most bytes read; a larger object fails the read. */
  maxBytes?: number;
}

/**
 * Above any body the cache stores: a provider's answer is read up to 32 MiB, and a streamed answer
 * captured up to 8 Mi characters.
 */
const defaultMaxBytes = 64 * 1024 * 1024;
/** S3's error answers are a short XML document. */
const maxErrorBytes = 64 * 1024;
const metadataPrefix = 'x-amz-meta-';

// Pure: a bundle that imports this module but never calls it (the control function's) leaves it out.
const s3 = /* @__PURE__ */ new LeanAwsClient({ service: 's3', target: 'S3', s3: true });

/**
 * The object stored under `key` in `bucket`, or undefined when there is none. A role without
 * s3:ListBucket on the bucket gets 403 instead of 404 for a missing object, and the inference roles
 * have none: they have no use for listing the bucket. (S3 read and write rights come in one IAM
 * statement, so a missing grant shows on writes.) Throws for other error answers, naming S3's error
 * code.
 */
export async function getObject(bucket: string, key: string, options: GetObjectOptions = {}): Promise<StoredObject | undefined> {
  const build = (destination: LeanAwsDestination): LeanAwsRequest => ({ method: 'GET', url: objectUrl(destination, bucket, key), headers: {} });
  const response = (await s3.send(build)) ?? (await s3.sendDirect(build));
  if (response.status === 404 || response.status === 403) {
    await readBody(response.body, maxErrorBytes, 'The S3 error answer').catch(() => undefined);
    return undefined;
  }
  if (response.status !== 200) throw await errorAnswer('GetObject', bucket, key, response);
  const body = await readBody(response.body, options.maxBytes ?? defaultMaxBytes, `The S3 object ${key}`);
  return { body, metadata: metadataOf(response.headers) };
}

/** Stores `body` under `key` in `bucket`, replacing any object there. Throws for an error answer. */
export async function putObject(bucket: string, key: string, body: Buffer, options: PutObjectOptions = {}): Promise<void> {
  const headers: Record<string, string> = {};
  if (options.contentType) headers['content-type'] = options.contentType;
  for (const [name, value] of Object.entries(options.metadata ?? {})) {
    if (!metadataName.test(name) || !metadataValue.test(value)) {
      throw new Error(`S3 metadata ${JSON.stringify(name)} cannot be sent: names are letters, digits, "-" and "_", values printable ASCII.`);
    }
    headers[metadataPrefix + name.toLowerCase()] = value;
  }
  const build = (destination: LeanAwsDestination): LeanAwsRequest => ({ method: 'PUT', url: objectUrl(destination, bucket, key), headers, body });
  const response = (await s3.send(build)) ?? (await s3.sendDirect(build));
  if (response.status !== 200) throw await errorAnswer('PutObject', bucket, key, response);
  // Read to the end, so the connection can carry the next request.
  await readBody(response.body, maxErrorBytes, 'The S3 answer');
}

const metadataName = /^[A-Za-z0-9_-]+$/;
const metadataValue = /^[\x20-\x7e]*$/;
/** A bucket name that can be a DNS label under S3's wildcard certificate: no dots. */
const hostableBucket = /^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/;

/** Where the object `key` of `bucket` is read and written (see the top). */
export function objectUrl({ endpoint, region }: LeanAwsDestination, bucket: string, key: string): URL {
  const path = encodeKey(key);
  if (endpoint) return new URL(`${endpoint.origin}${endpoint.pathname.replace(/\/+$/, '')}/${encodeSegment(bucket)}/${path}`);
  if (hostableBucket.test(bucket)) return new URL(`https://${bucket}.${regionalHost('s3', region)}/${path}`);
  return new URL(`https://${regionalHost('s3', region)}/${encodeSegment(bucket)}/${path}`);
}

/**
 * The key as S3 signs and reads it: each `/`-separated segment percent-encoded, keeping only
 * RFC 3986's unreserved characters. A URL would remove `.` and `..` segments (percent-encoded ones
 * too), so a key with them, or an empty one, is refused rather than sent as another key.
 */
export function encodeKey(key: string): string {
  const segments = key.split('/');
  if (key === '' || segments.some((segment) => segment === '.' || segment === '..')) {
    throw new Error(`The S3 key ${JSON.stringify(key.slice(0, 200))} is empty or has "." or ".." segments, which a URL cannot carry.`);
  }
  return segments.map(encodeSegment).join('/');
}

/** encodeURIComponent leaves `!'()*` as they are; SigV4's canonical form encodes them. */
function encodeSegment(segment: string): string {
  return encodeURIComponent(segment).replace(/[!'()*]/g, (character) => `%${character.charCodeAt(0).toString(16).toUpperCase()}`);
}

function metadataOf(headers: OutboundResponse['headers']): Record<string, string> {
  const metadata: Record<string, string> = {};
  for (const name in headers) {
    const value = headers[name];
    if (value !== undefined && name.startsWith(metadataPrefix)) metadata[name.slice(metadataPrefix.length)] = Array.isArray(value) ? value.join(', ') : value;
  }
  return metadata;
}

/** S3's error answer: `<Error><Code>NoSuchBucket</Code><Message>…</Message>…</Error>`, or nothing at all. */
async function errorAnswer(operation: string, bucket: string, key: string, response: OutboundResponse): Promise<Error> {
  const text = (await readBody(response.body, maxErrorBytes, 'The S3 error answer').catch(() => Buffer.alloc(0))).toString('utf8');
  const code = /<Code>([^<]*)<\/Code>/.exec(text)?.[1] || 'UnknownError';
  const message = /<Message>([^<]*)<\/Message>/.exec(text)?.[1] ?? text.slice(0, 300);
  const error = new Error(`S3 ${operation} of ${key} in ${bucket} failed with ${code} (HTTP ${response.status}): ${message}`);
  error.name = code;
  return Object.assign(error, { $metadata: { httpStatusCode: response.status } });
}
