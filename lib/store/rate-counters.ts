import { UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { dynamoClient } from './clients';
import { writeIfCondition } from './conditional';
import { rateCounterKey } from './keys';
import type { ReservedCounter } from './reserved-counters';
import { tables } from './tables';

/** Where a counter lives: its policy, bucket and window, and when the window ends (epoch ms). */
export interface CounterSlot {
  policyId: string;
  bucket: string;
  windowStart: number;
  windowEnd: number;
}

/** Counters outlive their window by this much, so a late read of the window still finds them. */
const expiryGraceSeconds = 3_600;
const expiresAt = (slot: CounterSlot) => Math.ceil(slot.windowEnd / 1000) + expiryGraceSeconds;

/**
 * Adds `amount` to the window's count only if the count stays at or under `limit`: one atomic
 * conditional write, so every process sees one order of reservations. Answers the count after the
 * write, or undefined when it would have gone over the limit (nothing was added). The item also
 * counts the writes that built it (`writes`, in the same update): how chunky reservations are, for
 * an operator and for the benchmark, at no extra write.
 */
export async function reserveOnCounter(slot: CounterSlot, amount: number, limit: number): Promise<number | undefined> {
  let count: number | undefined;
  const written = await writeIfCondition(async () => {
    const result = await dynamoClient().send(
      new UpdateItemCommand({
        TableName: tables.state,
        Key: marshall(rateCounterKey.item(slot.policyId, slot.bucket, slot.windowStart)),
        UpdateExpression: 'ADD #n :amount, #w :one SET expiresAt = :ttl',
        ConditionExpression: 'attribute_not_exists(#n) OR #n <= :max',
        ExpressionAttributeNames: { '#n': 'n', '#w': 'writes' },
        ExpressionAttributeValues: marshall({ ':amount': amount, ':one': 1, ':max': limit - amount, ':ttl': expiresAt(slot) }),
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    count = Number(result.Attributes?.n?.N ?? amount);
  });
  return written ? count : undefined;
}

/** A token policy's window as a counter that requests reserve on and settle (reserved-counters.ts). */
export function tokenCounter(slot: CounterSlot): ReservedCounter {
  return {
    id: `RL#${slot.policyId}#${slot.bucket}#${slot.windowStart}`,
    key: marshall(rateCounterKey.item(slot.policyId, slot.bucket, slot.windowStart)),
    expiresAt: expiresAt(slot),
  };
}
