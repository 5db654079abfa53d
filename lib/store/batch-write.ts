import { BatchWriteItemCommand, QueryCommand, UpdateItemCommand, type AttributeValue, type WriteRequest } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { writeIfCondition } from './conditional';
import { sleep } from '../core/time';
import { dynamoClient } from './clients';

/** BatchWriteItem's limit of requests per call. */
const batchSize = 25;
const maxAttempts = 9;

/**
 * Puts and deletes in batches of 25, sending again, with exponential backoff, whatever DynamoDB
 * leaves unprocessed (it does under throttling); fails once a batch is still unprocessed after
 * `maxAttempts` calls. `what` names the items in that error.
 */
export async function writeInBatches(table: string, requests: readonly WriteRequest[], what: string): Promise<void> {
  for (let offset = 0; offset < requests.length; offset += batchSize) {
    let pending: WriteRequest[] | undefined = requests.slice(offset, offset + batchSize);
    for (let attempt = 0; pending && pending.length > 0; attempt++) {
      if (attempt >= maxAttempts) throw new Error(`DynamoDB left ${pending.length} ${what} unprocessed after ${attempt} attempts.`);
      if (attempt > 0) await sleep(Math.min(1000, 50 * 2 ** attempt));
      const result: { UnprocessedItems?: Record<string, WriteRequest[]> } = await dynamoClient().send(
        new BatchWriteItemCommand({ RequestItems: { [table]: pending } }),
      );
      pending = result.UnprocessedItems?.[table];
    }
  }
}

/**
 * Deletes every item of partition `pk` whose sort key starts with `sortPrefix` (the versions of a
 * versioned entity), a page at a time. A delete cut short leaves the rest; running it again ends it.
 */
export async function deleteItemsUnder(table: string, pk: string, sortPrefix: string, what: string): Promise<void> {
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await dynamoClient().send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': { S: pk }, ':prefix': { S: sortPrefix } },
        ProjectionExpression: 'pk, sk',
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    await writeInBatches(
      table,
      (page.Items ?? []).map((item) => ({ DeleteRequest: { Key: { pk: item.pk!, sk: item.sk! } } })),
      what,
    );
    start = page.LastEvaluatedKey;
  } while (start);
}

/**
 * The first half of deleting a versioned entity: marks its head `deleting_at` and takes it off its
 * listing (reads then treat it as gone, updates refuse it), so its versions can go next and the
 * head last. Answers the head's attributes as they were before the mark, or undefined when there
 * was no head. Marking a head an interrupted delete had marked already keeps its first time.
 */
export async function markHeadDeleting(table: string, key: { pk: string; sk: string }, now: number): Promise<Record<string, AttributeValue> | undefined> {
  let old: Record<string, AttributeValue> | undefined;
  const marked = await writeIfCondition(async () => {
    const result = await dynamoClient().send(
      new UpdateItemCommand({
        TableName: table,
        Key: marshall(key),
        UpdateExpression: 'SET deleting_at = if_not_exists(deleting_at, :now) REMOVE gsi1pk, gsi1sk',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: marshall({ ':now': now }),
        ReturnValues: 'ALL_OLD',
      }),
    );
    old = result.Attributes;
  });
  return marked ? old : undefined;
}
