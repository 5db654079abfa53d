/**
 * Stored responses (the Responses API's `store`): the response object, the input items it was asked
 * with and the conversation before it, so `GET` can answer it and `previous_response_id` can carry
 * the conversation on. One state-table item each, under its workspace, expiring after
 * `GATEWAY_RESPONSES_TTL_DAYS` (30 days); a document too large for an item is an S3 object the item
 * points to. A response made with `store: false` leaves only a marker of its id, without content.
 *
 * The item's `status` attribute is the response's status: a background response moves through
 * `queued`, `in_progress` and its end by conditional writes on it alone (a claim under a lease, a
 * cancel, the end), and reads show it over the document's.
 */
import { DeleteItemCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { DeleteObjectCommand } from '@aws-sdk/client-s3';
import { dynamoClient, s3Client } from './clients';
import { writeIfCondition } from './conditional';
import { responseKey } from './keys';
import { getItemFast, updateItemFast } from './lean-dynamo';
import { getObject, putObject } from './s3-object';
import { dataBucket, tables } from './tables';

/** A stored response; the store reads only its id and status, the Responses layer names the rest (lib/responses/types.ts). */
export interface StoredResponse<Response extends { id: string; status: string } = { id: string; status: string }, Item = unknown> {
  response: Response;
  /** The items this response was asked with (what `input_items` lists). */
  input: Item[];
  /** The conversation before it, when it continued one (`previous_response_id`). */
  history: Item[];
  /**
   * Where the response was made natively (the provider's own id, provider, base URL and a hash of
   * the credential), so that a continuation sent there can name it instead of sending it again.
   */
  link?: { providerResponseId: string; provider: string; baseUrl: string; credential: string };
  /** A background response's request and who asked, which its worker runs. */
  run?: { request: Record<string, unknown>; caller: { organisationId: string; workspaceId: string; keyId?: string }; metadata: Record<string, unknown> };
}

/** A background response as its worker claimed it: the document and the sealed options it runs with. */
export interface ClaimedResponse<Stored extends StoredResponse> {
  stored: Stored;
  sealed: string;
  /** The claim's lease: the run's end is written only under it. */
  leaseUntil: number;
}

/** An item stops at 400 KB; this leaves room for the key and the other attributes. */
const inlineLimit = 350 * 1024;

export function responsesTtlSeconds(): number {
  const days = Number(process.env.GATEWAY_RESPONSES_TTL_DAYS);
  return Math.round((Number.isFinite(days) && days > 0 ? days : 30) * 24 * 60 * 60);
}

const nowSeconds = () => Math.floor(Date.now() / 1000);
/** DynamoDB reserves these words; expressions name them through placeholders. */
const reserved = { '#document': 'document', '#status': 'status', '#stored': 'stored' };

/**
 * Stores a response, and for a background one the sealed options its worker runs with. Written
 * with UpdateItem over the lean client: the write follows every answer, and the SDK's PutItem
 * would cost each one its marshalling.
 */
export async function putStoredResponse(workspaceId: string, stored: StoredResponse, sealed?: string): Promise<void> {
  const values: Record<string, AttributeValue> = {
    ':stored': { BOOL: true },
    ':status': { S: stored.response.status },
    ':expires': { N: String(nowSeconds() + responsesTtlSeconds()) },
  };
  let update = 'SET #stored = :stored, #status = :status, expiresAt = :expires';
  if (sealed) {
    update += ', sealed = :sealed';
    values[':sealed'] = { S: sealed };
  }
  await updateItemFast({
    TableName: tables.state,
    Key: keyOf(workspaceId, stored.response.id),
    ...(await withDocument(workspaceId, stored, update, values)),
    ExpressionAttributeNames: reserved,
  });
}

/**
 * A write's expression with the document in it: inline, or an S3 object written first (no item
 * points to a document not yet there); `remove` names attributes the write removes besides.
 */
async function withDocument(
  workspaceId: string,
  stored: StoredResponse,
  set: string,
  values: Record<string, AttributeValue>,
  remove: string[] = [],
): Promise<{ UpdateExpression: string; ExpressionAttributeValues: Record<string, AttributeValue> }> {
  const document = Buffer.from(JSON.stringify(stored));
  const inline = document.length <= inlineLimit;
  let content: AttributeValue;
  if (inline) content = { S: document.toString('utf8') };
  else {
    const objectKey = responseKey.object(workspaceId, stored.response.id);
    await putObject(dataBucket(), objectKey, document, { contentType: 'application/json' });
    content = { S: objectKey };
  }
  const removed = [inline ? 'documentObject' : '#document', ...remove].join(', ');
  return {
    UpdateExpression: `${set}, ${inline ? '#document' : 'documentObject'} = :content REMOVE ${removed}`,
    ExpressionAttributeValues: { ...values, ':content': content },
  };
}

/** The content-free marker of a response made with `store: false`: chaining from it can say why it cannot. */
export async function putUnstoredMarker(workspaceId: string, id: string): Promise<void> {
  await updateItemFast({
    TableName: tables.state,
    Key: keyOf(workspaceId, id),
    UpdateExpression: 'SET #stored = :stored, expiresAt = :expires REMOVE #document, documentObject',
    ExpressionAttributeNames: { '#document': 'document', '#stored': 'stored' },
    ExpressionAttributeValues: { ':stored': { BOOL: false }, ':expires': { N: String(nowSeconds() + responsesTtlSeconds()) } },
  });
}

/** The stored response, `'not_stored'` for a `store: false` marker, or undefined (none, expired, another workspace's). */
export async function getStoredResponse<Stored extends StoredResponse>(workspaceId: string, id: string): Promise<Stored | 'not_stored' | undefined> {
  // Consistent: a response is readable, and chainable, as soon as it was answered.
  const item = await getItemFast(tables.state, keyOf(workspaceId, id), { consistent: true });
  if (!item || !(Number(item.expiresAt?.N) > nowSeconds())) return undefined;
  if (item.stored?.BOOL === false) return 'not_stored';
  return documentOf<Stored>(item);
}

async function documentOf<Stored extends StoredResponse>(item: Record<string, AttributeValue>): Promise<Stored | undefined> {
  let stored: Stored | undefined;
  if (item.document?.S) stored = JSON.parse(item.document.S) as Stored;
  else if (item.documentObject?.S) {
    const object = await getObject(dataBucket(), item.documentObject.S);
    stored = object ? (JSON.parse(object.body.toString('utf8')) as Stored) : undefined;
  }
  // The status moves on its own (a claim, a cancel) before the document is written again.
  if (stored && item.status?.S) stored.response.status = item.status.S;
  return stored;
}

/**
 * Claims a background response for a run: `queued`, or `in_progress` under a lease that ran out
 * (its worker died), becomes `in_progress` under a new lease. Undefined when it is not there to run
 * (ended, cancelled, claimed by a live worker, gone).
 */
export async function claimStoredResponse<Stored extends StoredResponse>(
  workspaceId: string,
  id: string,
  leaseSeconds: number,
): Promise<ClaimedResponse<Stored> | undefined> {
  const now = nowSeconds();
  let claimed: Record<string, AttributeValue> | undefined;
  const won = await writeIfCondition(async () => {
    claimed = await updateItemFast({
      TableName: tables.state,
      Key: keyOf(workspaceId, id),
      UpdateExpression: 'SET #status = :running, leaseUntil = :lease',
      ConditionExpression: 'attribute_exists(sealed) AND (#status = :queued OR (#status = :running AND leaseUntil < :now))',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':running': { S: 'in_progress' },
        ':queued': { S: 'queued' },
        ':lease': { N: String(now + leaseSeconds) },
        ':now': { N: String(now) },
      },
      ReturnValues: 'ALL_NEW',
    });
  });
  if (!won || !claimed?.sealed?.S) return undefined;
  const stored = await documentOf<Stored>(claimed);
  return stored ? { stored, sealed: claimed.sealed.S, leaseUntil: now + leaseSeconds } : undefined;
}

/** Ends a claimed background response with its answer; false when it was cancelled (or taken over) meanwhile. */
export async function finishStoredResponse(workspaceId: string, stored: StoredResponse, leaseUntil: number): Promise<boolean> {
  const values: Record<string, AttributeValue> = {
    ':status': { S: stored.response.status },
    ':running': { S: 'in_progress' },
    ':lease': { N: String(leaseUntil) },
  };
  const write = await withDocument(workspaceId, stored, 'SET #status = :status', values, ['sealed', 'leaseUntil']);
  return writeIfCondition(() =>
    updateItemFast({
      TableName: tables.state,
      Key: keyOf(workspaceId, stored.response.id),
      ...write,
      ConditionExpression: '#status = :running AND leaseUntil = :lease',
      ExpressionAttributeNames: { '#document': 'document', '#status': 'status' },
    }),
  );
}

/**
 * Cancels a background response that has not ended: `cancelled`, its sealed options gone. Answers
 * whether it did; false when the response had ended (or was never a background one).
 */
export async function cancelStoredResponse(workspaceId: string, id: string): Promise<boolean> {
  return writeIfCondition(() =>
    updateItemFast({
      TableName: tables.state,
      Key: keyOf(workspaceId, id),
      UpdateExpression: 'SET #status = :cancelled REMOVE sealed, leaseUntil',
      ConditionExpression: 'attribute_exists(sealed) AND (#status = :queued OR #status = :running)',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':cancelled': { S: 'cancelled' }, ':queued': { S: 'queued' }, ':running': { S: 'in_progress' } },
    }),
  );
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
