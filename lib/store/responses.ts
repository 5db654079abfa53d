/**
 * Stored responses (the Responses API's `store`): the response object, the input items it was asked
 * with and the conversation before it, so `GET` can answer it and `previous_response_id` can carry
 * the conversation on. One state-table item each, under its workspace, expiring after
 * `GATEWAY_RESPONSES_TTL_DAYS` (30 days); a document too large for an item is an S3 object the item
 * points to. A response made with `store: false` leaves only a marker of its id, without content.
 */
import { DeleteItemCommand, PutItemCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { DeleteObjectCommand } from '@aws-sdk/client-s3';
import { dynamoClient, s3Client } from './clients';
import { responseKey } from './keys';
import { getItemFast } from './lean-dynamo';
import { getObject, putObject } from './s3-object';
import { dataBucket, tables } from './tables';

/** A stored response; the store reads only its id, the Responses layer names the rest (lib/responses/types.ts). */
export interface StoredResponse<Response extends { id: string } = { id: string }, Item = unknown> {
  response: Response;
  /** The items this response was asked with (what `input_items` lists). */
  input: Item[];
  /** The conversation before it, when it continued one (`previous_response_id`). */
  history: Item[];
  /** Where it ran natively, so a chained request to the same place can pass the id on. */
  origin?: { provider: string; baseUrl: string; credential: string; providerResponseId: string };
}

/** An item stops at 400 KB; this leaves room for the key and the other attributes. */
const inlineLimit = 350 * 1024;

export function responsesTtlSeconds(): number {
  const days = Number(process.env.GATEWAY_RESPONSES_TTL_DAYS);
  return Math.round((Number.isFinite(days) && days > 0 ? days : 30) * 24 * 60 * 60);
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

export async function putStoredResponse(workspaceId: string, stored: StoredResponse): Promise<void> {
  const id = stored.response.id;
  const document = Buffer.from(JSON.stringify(stored));
  const item: Record<string, AttributeValue> = {
    ...keyOf(workspaceId, id),
    stored: { BOOL: true },
    expiresAt: { N: String(nowSeconds() + responsesTtlSeconds()) },
  };
  if (document.length > inlineLimit) {
    const objectKey = responseKey.object(workspaceId, id);
    // The object goes first, so no item ever points to a document not yet written.
    await putObject(dataBucket(), objectKey, document, { contentType: 'application/json' });
    item.documentObject = { S: objectKey };
  } else {
    item.document = { S: document.toString('utf8') };
  }
  await dynamoClient().send(new PutItemCommand({ TableName: tables.state, Item: item }));
}

/** The content-free marker of a response made with `store: false`: chaining from it can say why it cannot. */
export async function putUnstoredMarker(workspaceId: string, id: string): Promise<void> {
  await dynamoClient().send(
    new PutItemCommand({
      TableName: tables.state,
      Item: { ...keyOf(workspaceId, id), stored: { BOOL: false }, expiresAt: { N: String(nowSeconds() + responsesTtlSeconds()) } },
    }),
  );
}

/** The stored response, `'not_stored'` for a `store: false` marker, or undefined (none, expired, another workspace's). */
export async function getStoredResponse<Stored extends StoredResponse>(workspaceId: string, id: string): Promise<Stored | 'not_stored' | undefined> {
  // Consistent: a response is readable, and chainable, as soon as it was answered.
  const item = await getItemFast(tables.state, keyOf(workspaceId, id), { consistent: true });
  if (!item || !(Number(item.expiresAt?.N) > nowSeconds())) return undefined;
  if (item.stored?.BOOL === false) return 'not_stored';
  if (item.document?.S) return JSON.parse(item.document.S) as Stored;
  if (item.documentObject?.S) {
    const object = await getObject(dataBucket(), item.documentObject.S);
    return object ? (JSON.parse(object.body.toString('utf8')) as Stored) : undefined;
  }
  return undefined;
}

/** Deletes a stored response (and its document object); false when there was none. */
export async function deleteStoredResponse(workspaceId: string, id: string): Promise<boolean> {
  const { Attributes: old } = await dynamoClient().send(
    new DeleteItemCommand({ TableName: tables.state, Key: keyOf(workspaceId, id), ReturnValues: 'ALL_OLD' }),
  );
  if (old?.documentObject?.S) await s3Client().send(new DeleteObjectCommand({ Bucket: dataBucket(), Key: old.documentObject.S }));
  return old !== undefined && old.stored?.BOOL !== false && Number(old.expiresAt?.N) > nowSeconds();
}

function keyOf(workspaceId: string, id: string): Record<string, AttributeValue> {
  const { pk, sk } = responseKey.item(workspaceId, id);
  return { pk: { S: pk }, sk: { S: sk } };
}
