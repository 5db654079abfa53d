import { QueryCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { dynamoClient } from './clients';
import { writeIfCondition } from './conditional';
import { usageCounterKey } from './keys';
import { readTotals, type ReservedCounter } from './reserved-counters';
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

/** The bucket's period as a counter that requests reserve on and settle (reserved-counters.ts). */
export function usageCounter(slot: UsageSlot): ReservedCounter {
  return {
    id: `UL#${slot.policyId}#${slot.periodStart}#${slot.bucket}`,
    key: key(slot),
    expiresAt: slot.periodEnd === undefined ? undefined : Math.ceil(slot.periodEnd / 1000) + expiryGraceSeconds,
    group: slot.group,
  };
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

/** The buckets of a budget's period that have any usage settled, at most `limit` of them. */
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
      // Usage settled: what requests under way reserved is not spent yet, and a bucket only
      // reserved on (or whose requests spent nothing) has no usage to show.
      const usage = readTotals(raw).settled;
      if (usage <= 0) continue;
      const item = unmarshall(raw);
      buckets.push({
        group: (item.group ?? {}) as Record<string, string | null>,
        usage,
        ...(typeof item.alertedAt === 'number' ? { alertedAt: item.alertedAt } : {}),
      });
    }
    start = page.LastEvaluatedKey;
  } while (start && buckets.length < limit);
  return buckets;
}
