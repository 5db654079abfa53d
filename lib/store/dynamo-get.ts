/**
 * GetItem without the AWS SDK, for the response cache's hot path. Through the SDK client one read
 * costs about 1–1.5 ms of CPU (middleware stack, endpoint rules, retry strategy, the JSON protocol's
 * schema walk), several times what a whole warm cache hit costs. This sends the same DynamoDB JSON
 * protocol request over the gateway's own HTTP client, signed with SigV4, and answers with the
 * shape the SDK answers with (binary attributes as Uint8Array), so callers can switch per call.
 *
 * It talks to the place `dynamoClient()` talks to, with the credentials that client uses in the
 * function bundles: the emulator endpoint and its static credentials locally, else
 * `https://dynamodb.<region>.amazonaws.com` with the role credentials Lambda puts in the
 * environment. Where those are missing (a deployer's profile, say) it hands the read to the SDK
 * client, whose credential chain can find them; so it does when the outbound address guard refuses
 * the endpoint.
 *
 * Not for every read: there is no retry ladder (one more attempt only when the connection fails
 * before an answer), since a cache read that fails is a miss anyway.
 */
import { GetItemCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { SignatureV4 } from '@smithy/signature-v4';
import { GatewayError } from '../core/errors';
import { readBody } from '../core/read-body';
import { openOutbound, type OutboundResponse } from '../outbound/http-client';
import { Sha256, type AwsCredentials } from '../outbound/sigv4';
import { dynamoClient, endpointEnv, localSettings } from './clients';

export interface GetItemOptions {
  consistent?: boolean;
}

/** The SigV4 signing service of DynamoDB. */
const service = 'dynamodb';
const target = 'DynamoDB_20120810.GetItem';
const contentType = 'application/x-amz-json-1.0';
/** An item is at most 400 KB; its JSON (binary as base64) stays well under this. */
const maxAnswerBytes = 4 * 1024 * 1024;


/** Where reads go and how they are signed, with the environment values it was built from. */
interface Destination {
  endpoint: string | undefined;
  region: string | undefined;
  accessKeyId: string | undefined;
  secretAccessKey: string | undefined;
  sessionToken: string | undefined;
  /** Undefined when the environment has no credentials or region of its own: the SDK reads instead. */
  signing?: { url: URL; port: number | undefined; signer: SignatureV4 };
}

let destination: Destination | undefined;

/**
 * Built once per process and kept while the environment says the same: Lambda's role credentials
 * are fixed for a container's life, and the signer keeps its derived signing key per day. Tests
 * and the local runtime move endpoints and keys around, hence the comparison on every call (a few
 * environment reads, next to a network round trip).
 */
function currentDestination(): Destination {
  const env = process.env;
  const endpoint = env[endpointEnv.dynamodb];
  const region = env.AWS_REGION || env.AWS_DEFAULT_REGION;
  const accessKeyId = env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
  const sessionToken = env.AWS_SESSION_TOKEN;
  const known = destination;
  if (
    known &&
    known.endpoint === endpoint &&
    known.region === region &&
    known.accessKeyId === accessKeyId &&
    known.secretAccessKey === secretAccessKey &&
    known.sessionToken === sessionToken
  ) {
    return known;
  }
  destination = { endpoint, region, accessKeyId, secretAccessKey, sessionToken, signing: signingFor(endpoint, region, accessKeyId, secretAccessKey, sessionToken) };
  return destination;
}

function signingFor(endpoint: string | undefined, region: string | undefined, accessKeyId?: string, secretAccessKey?: string, sessionToken?: string): Destination['signing'] {
  const local = endpoint ? localSettings(endpointEnv.dynamodb) : undefined;
  const fromEnv: AwsCredentials | undefined = accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) } : undefined;
  const credentials = local?.credentials ?? fromEnv;
  const signingRegion = local?.region ?? region;
  if (!credentials || !signingRegion) return undefined;
  const url = new URL(local?.endpoint ?? `https://dynamodb.${signingRegion}.amazonaws.com`);
  const signer = new SignatureV4({ credentials, region: signingRegion, service, sha256: Sha256, applyChecksum: false });
  return { url, port: url.port ? Number(url.port) : undefined, signer };
}

/**
 * The item stored under `key` in `table`, or undefined when there is none, with attribute values as
 * the SDK's GetItem gives them. Throws for an error answer, naming DynamoDB's error type.
 */
export async function getItemFast(table: string, key: Record<string, AttributeValue>, options: GetItemOptions = {}): Promise<Record<string, AttributeValue> | undefined> {
  const current = currentDestination();
  const { signing } = current;
  if (!signing) return sdkGetItem(table, key, options);
  const body = JSON.stringify({ TableName: table, Key: key, ...(options.consistent ? { ConsistentRead: true } : {}) }, bytesAsBase64);
  const { url, port, signer } = signing;
  const signed = await signer.sign({
    method: 'POST',
    protocol: url.protocol,
    hostname: url.hostname,
    port,
    path: '/',
    query: {},
    headers: { host: url.host, 'content-type': contentType, 'x-amz-target': target },
    body,
  });
  let response: OutboundResponse;
  try {
    response = await send(url, signed.headers as Record<string, string>, body);
  } catch (error) {
    if (!(error instanceof GatewayError) || error.code !== 'custom_host_not_allowed') throw error;
    // The address guard refuses the endpoint (a VPC endpoint's private address, say): the SDK's
    // own connections are not guarded, so it reads from here on, until the endpoint or keys change.
    current.signing = undefined;
    return sdkGetItem(table, key, options);
  }
  const text = (await readBody(response.body, maxAnswerBytes, 'The DynamoDB answer')).toString('utf8');
  if (response.status !== 200) throw errorAnswer(table, response.status, text);
  const { Item: item } = JSON.parse(text) as { Item?: Record<string, AttributeValue> };
  if (!item) return undefined;
  for (const name in item) decodeBinary(item[name]!);
  return item;
}

async function sdkGetItem(table: string, key: Record<string, AttributeValue>, options: GetItemOptions): Promise<Record<string, AttributeValue> | undefined> {
  const { Item } = await dynamoClient().send(new GetItemCommand({ TableName: table, Key: key, ConsistentRead: options.consistent }));
  return Item;
}

/**
 * A read is safe to send twice, and the outbound client sends a POST once only: a pooled connection
 * that DynamoDB closed as the request went out would otherwise turn into a miss.
 */
async function send(url: URL, headers: Record<string, string>, body: string): Promise<OutboundResponse> {
  const request = { url, method: 'POST', headers, body, target: 'DynamoDB' };
  try {
    return await openOutbound(request).response;
  } catch (error) {
    if (!(error instanceof GatewayError) || error.status !== 502) throw error;
    return openOutbound(request).response;
  }
}

/** DynamoDB's error answer: `{"__type": "com.amazonaws.dynamodb.v20120810#ResourceNotFoundException", "message": …}`. */
function errorAnswer(table: string, status: number, text: string): Error {
  let type = 'UnknownError';
  let message = text.slice(0, 300);
  try {
    const parsed = JSON.parse(text) as { __type?: string; message?: string; Message?: string };
    if (parsed.__type) type = parsed.__type.slice(parsed.__type.lastIndexOf('#') + 1);
    message = parsed.message ?? parsed.Message ?? message;
  } catch {
    // Not JSON (a proxy's page, say): the text itself says most.
  }
  const error = new Error(`DynamoDB GetItem on ${table} failed with ${type} (HTTP ${status}): ${message}`);
  error.name = type;
  return Object.assign(error, { $metadata: { httpStatusCode: status } });
}

/** Binary values travel as base64 in the JSON protocol; the SDK hands them out as bytes. */
function decodeBinary(value: AttributeValue): void {
  const fields = value as unknown as Record<string, unknown>;
  if (typeof fields.B === 'string') fields.B = fromBase64(fields.B);
  else if (Array.isArray(fields.BS)) fields.BS = (fields.BS as string[]).map(fromBase64);
  else if (fields.M) for (const name in fields.M as object) decodeBinary((fields.M as Record<string, AttributeValue>)[name]!);
  else if (Array.isArray(fields.L)) for (const entry of fields.L as AttributeValue[]) decodeBinary(entry);
}

/** A plain Uint8Array view, as the SDK's base64 decoder returns, rather than a Buffer. */
function fromBase64(text: string): Uint8Array {
  const bytes = Buffer.from(text, 'base64');
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * Binary key attributes go out as base64, as the SDK writes them. The holder's own value is looked
 * at because a Buffer reaches a replacer already turned into `{type: 'Buffer', data}` by its toJSON.
 */
function bytesAsBase64(this: Record<string, unknown>, name: string, value: unknown): unknown {
  const original = this[name];
  return original instanceof Uint8Array ? Buffer.from(original.buffer, original.byteOffset, original.byteLength).toString('base64') : value;
}
