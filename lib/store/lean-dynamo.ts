/**
 * GetItem, Query and UpdateItem without the AWS SDK, for the hot paths (the response cache, its
 * semantic index, rate-limit and budget counters). Through the SDK client one call costs about 1–1.5 ms of
 * CPU (middleware stack, endpoint rules, retry strategy, the JSON protocol's schema walk), several
 * times what a whole warm cache hit costs. This sends the same DynamoDB JSON protocol request over
 * the gateway's own HTTP client, signed with SigV4, and answers with the shape the SDK answers
 * with (binary attributes as Uint8Array), so callers can switch per call.
 *
 * The request goes where `dynamoClient()` sends its own, signed with the credentials that client
 * uses in the function bundles (lean-aws-request.ts). Where the environment has none of its own (a
 * deployer's profile, say), or the outbound address guard refuses the endpoint, it hands the call
 * to the SDK client, whose credential chain can find them and whose connections are not guarded.
 *
 * Not for every call: there is no retry ladder (one more attempt only when the connection fails
 * before an answer). The reads it serves degrade to a miss or a refusal when they fail, and the
 * counter adds it serves are logged and lost, as they would be once the SDK's retries ran out.
 */
import {
  GetItemCommand,
  QueryCommand,
  UpdateItemCommand,
  type AttributeValue,
  type QueryCommandInput,
  type UpdateItemCommandInput,
} from '@aws-sdk/client-dynamodb';
import { readBody } from '../core/read-body';
import { dynamoClient } from './clients';
import { LeanAwsClient, regionalHost } from './lean-aws-request';

export interface GetItemOptions {
  consistent?: boolean;
}

const contentType = 'application/x-amz-json-1.0';
/** An item is at most 400 KB and a Query page 1 MB; their JSON (binary as base64) stays well under this. */
const maxAnswerBytes = 4 * 1024 * 1024;

// Pure: a bundle that imports this module but never calls it (the control function's) leaves it out.
const dynamo = /* @__PURE__ */ new LeanAwsClient({ service: 'dynamodb', target: 'DynamoDB' });

type Item = Record<string, AttributeValue>;

/**
 * One DynamoDB call over the lean client: its parsed answer, or undefined when the call is the SDK
 * client's to make (see above). Throws for an error answer, naming DynamoDB's error type.
 */
async function leanCall<T>(operation: 'GetItem' | 'Query' | 'UpdateItem', table: string, request: Record<string, unknown>): Promise<T | undefined> {
  const response = await dynamo.send(({ endpoint, region }) => ({
    method: 'POST',
    url: endpoint ?? new URL(`https://${regionalHost('dynamodb', region)}/`),
    headers: { 'content-type': contentType, 'x-amz-target': `DynamoDB_20120810.${operation}` },
    body: JSON.stringify(request, bytesAsBase64),
  }));
  if (!response) return undefined;
  const text = (await readBody(response.body, maxAnswerBytes, 'The DynamoDB answer')).toString('utf8');
  if (response.status !== 200) throw errorAnswer(operation, table, response.status, text);
  return JSON.parse(text) as T;
}

/**
 * The item stored under `key` in `table`, or undefined when there is none, with attribute values as
 * the SDK's GetItem gives them.
 */
export async function getItemFast(table: string, key: Item, options: GetItemOptions = {}): Promise<Item | undefined> {
  const answer = await leanCall<{ Item?: Item }>('GetItem', table, { TableName: table, Key: key, ...(options.consistent ? { ConsistentRead: true } : {}) });
  if (!answer) return sdkGetItem(table, key, options);
  if (!answer.Item) return undefined;
  decodeItem(answer.Item);
  return answer.Item;
}

/** One page of a Query (the caller's `Limit` bounds it), with attribute values as the SDK's Query gives them. */
export async function queryPageFast(input: QueryCommandInput & { TableName: string }): Promise<Item[]> {
  const answer = await leanCall<{ Items?: Item[] }>('Query', input.TableName, { ...input });
  if (!answer) return (await dynamoClient().send(new QueryCommand(input))).Items ?? [];
  const items = answer.Items ?? [];
  for (const item of items) decodeItem(item);
  return items;
}

/** An UpdateItem; answers the attributes its `ReturnValues` asked for, as the SDK's UpdateItem gives them. */
export async function updateItemFast(input: UpdateItemCommandInput & { TableName: string }): Promise<Item | undefined> {
  const answer = await leanCall<{ Attributes?: Item }>('UpdateItem', input.TableName, { ...input });
  if (!answer) return (await dynamoClient().send(new UpdateItemCommand(input))).Attributes;
  if (answer.Attributes) decodeItem(answer.Attributes);
  return answer.Attributes;
}

function decodeItem(item: Item): void {
  for (const name in item) decodeBinary(item[name]!);
}

async function sdkGetItem(table: string, key: Item, options: GetItemOptions): Promise<Item | undefined> {
  const { Item } = await dynamoClient().send(new GetItemCommand({ TableName: table, Key: key, ConsistentRead: options.consistent }));
  return Item;
}

/** DynamoDB's error answer: `{"__type": "com.amazonaws.dynamodb.v20120810#ResourceNotFoundException", "message": …}`. */
function errorAnswer(operation: string, table: string, status: number, text: string): Error {
  let type = 'UnknownError';
  let message = text.slice(0, 300);
  try {
    const parsed = JSON.parse(text) as { __type?: string; message?: string; Message?: string };
    if (parsed.__type) type = parsed.__type.slice(parsed.__type.lastIndexOf('#') + 1);
    message = parsed.message ?? parsed.Message ?? message;
  } catch {
    // Not JSON (a proxy's page, say): the text itself says most.
  }
  const error = new Error(`DynamoDB ${operation} on ${table} failed with ${type} (HTTP ${status}): ${message}`);
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
