/**
 * GetItem without the AWS SDK, for the response cache's hot path. Through the SDK client one read
 * costs about 1–1.5 ms of CPU (middleware stack, endpoint rules, retry strategy, the JSON protocol's
 * schema walk), several times what a whole warm cache hit costs. This sends the same DynamoDB JSON
 * protocol request over the gateway's own HTTP client, signed with SigV4, and answers with the
 * shape the SDK answers with (binary attributes as Uint8Array), so callers can switch per call.
 *
 * The request goes where `dynamoClient()` sends its own, signed with the credentials that client
 * uses in the function bundles (lean-aws-request.ts). Where the environment has none of its own (a
 * deployer's profile, say), or the outbound address guard refuses the endpoint, it hands the read to
 * the SDK client, whose credential chain can find them and whose connections are not guarded.
 *
 * Not for every read: there is no retry ladder (one more attempt only when the connection fails
 * before an answer), since a cache read that fails is a miss anyway.
 */
import { GetItemCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { readBody } from '../core/read-body';
import { dynamoClient } from './clients';
import { LeanAwsClient, regionalHost } from './lean-aws-request';

export interface GetItemOptions {
  consistent?: boolean;
}

const target = 'DynamoDB_20120810.GetItem';
const contentType = 'application/x-amz-json-1.0';
/** An item is at most 400 KB; its JSON (binary as base64) stays well under this. */
const maxAnswerBytes = 4 * 1024 * 1024;


// Pure: a bundle that imports this module but never calls it (the control function's) leaves it out.
const dynamo = /* @__PURE__ */ new LeanAwsClient({ service: 'dynamodb', target: 'DynamoDB' });

/**
 * The item stored under `key` in `table`, or undefined when there is none, with attribute values as
 * the SDK's GetItem gives them. Throws for an error answer, naming DynamoDB's error type.
 */
export async function getItemFast(table: string, key: Record<string, AttributeValue>, options: GetItemOptions = {}): Promise<Record<string, AttributeValue> | undefined> {
  const body = JSON.stringify({ TableName: table, Key: key, ...(options.consistent ? { ConsistentRead: true } : {}) }, bytesAsBase64);
  const response = await dynamo.send(({ endpoint, region }) => ({
    method: 'POST',
    url: endpoint ?? new URL(`https://${regionalHost('dynamodb', region)}/`),
    headers: { 'content-type': contentType, 'x-amz-target': target },
    body,
  }));
  if (!response) return sdkGetItem(table, key, options);
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
