import { QueryCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { dynamoClient } from './clients';
import { writeIfCondition } from './conditional';
import { coalescedAdd, sharedRead } from './counter-batching';
import { getItemFast, updateItemFast } from './lean-dynamo';
import { usageCounterKey } from './keys';
import { tables } from './tables';

/** Where a budget's usage lives: its policy, the period's start, the bucket, and when the period ends (undefined: never). */
export interface UsageSlot {
  policyId: string;
  periodStart: number;
  periodEnd: number | undefined;
  bucket: string;
  /** The group values that made the bucket, kept on the item so a listing can name it. */
  group: Record<string, string | null>;
}

/** A period's items outlive it by a day, so the answer of a request at the boundary still lands and reads. */
const expiryGraceSeconds = 86_400;

const key = (slot: UsageSlot) => marshall(usageCounterKey.item(slot.policyId, slot.periodStart, slot.bucket));
const counterId = (slot: UsageSlot) => `UL#${slot.policyId}#${slot.periodStart}#${slot.bucket}`;

/**
 * Adds usage to the bucket's period, whatever its total; answers the total after the write. Adds
 * to one bucket that overlap in this container go in one write (counter-batching.ts).
 */
export function addUsage(slot: UsageSlot, amount: number): Promise<number> {
  const ttl = slot.periodEnd === undefined ? '' : ', expiresAt = :ttl';
  return coalescedAdd(counterId(slot), amount, async (sum) => {
    const attributes = await updateItemFast({
      TableName: tables.state,
      Key: key(slot),
      UpdateExpression: `ADD #n :amount SET #g = if_not_exists(#g, :group)${ttl}`,
      ExpressionAttributeNames: { '#n': 'n', '#g': 'group' },
      ExpressionAttributeValues: marshall({ ':amount': sum, ':group': slot.group, ...(slot.periodEnd === undefined ? {} : { ':ttl': Math.ceil(slot.periodEnd / 1000) + expiryGraceSeconds }) }),
      ReturnValues: 'UPDATED_NEW',
    });
    return Number(attributes?.n?.N ?? sum);
  });
}

/** The bucket's usage in the period (strongly consistent: the previous answer's usage counts); concurrent reads of one bucket share one. */
export function readUsage(slot: UsageSlot): Promise<number> {
  return sharedRead(counterId(slot), async () => Number((await getItemFast(tables.state, key(slot), { consistent: true }))?.n?.N ?? 0));
}

/** Marks the bucket's period alerted; true only for the one write that marked it, so an alert is raised once per period. */
export function markAlerted(slot: UsageSlot, at: number): Promise<boolean> {
  return writeIfCondition(() =>
    dynamoClient().send(
      new UpdateItemCommand({
        TableName: tables.state,
        Key: key(slot),
        UpdateExpression: 'SET alertedAt = :at',
        ConditionExpression: 'attribute_exists(#n) AND attribute_not_exists(alertedAt)',
        ExpressionAttributeNames: { '#n': 'n' },
        ExpressionAttributeValues: marshall({ ':at': at }),
      }),
    ),
  );
}

export interface BucketUsage {
  group: Record<string, string | null>;
  usage: number;
  alertedAt?: number;
}

/** The buckets of a budget's period that have any usage, at most `limit` of them. */
export async function listUsage(policyId: string, periodStart: number, limit: number): Promise<BucketUsage[]> {
  const buckets: BucketUsage[] = [];
  let start: Record<string, any> | undefined;
  do {
    const page = await dynamoClient().send(
      new QueryCommand({
        TableName: tables.state,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: marshall({ ':pk': usageCounterKey.partition(policyId, periodStart) }),
        ConsistentRead: true,
        Limit: limit - buckets.length,
        ExclusiveStartKey: start,
      }),
    );
    for (const raw of page.Items ?? []) {
      const item = unmarshall(raw);
      buckets.push({ group: (item.group ?? {}) as Record<string, string | null>, usage: Number(item.n ?? 0), ...(typeof item.alertedAt === 'number' ? { alertedAt: item.alertedAt } : {}) });
    }
    start = page.LastEvaluatedKey;
  } while (start && buckets.length < limit);
  return buckets;
}
