import { DeleteItemCommand, QueryCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { dynamoClient } from './clients';
import { writeIfCondition } from './conditional';
import { breakerKey } from './keys';
import { tables } from './tables';

/** A circuit breaker as stored: absolute epoch-ms timestamps, so every container reads the same. */
export interface StoredBreaker {
  failures: number;
  /** When the breaker opened; absent while closed. */
  openedAt?: number;
  /** When a half-open probe was let through. */
  probeAt?: number;
}

const stateTtlSeconds = 7 * 86_400;

/** Every breaker of one config identity, by target path (one strongly consistent Query). */
export async function readBreakers(identity: string): Promise<Map<string, StoredBreaker>> {
  const result = await dynamoClient().send(
    new QueryCommand({ TableName: tables.state, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: marshall({ ':pk': breakerKey.partition(identity) }), ConsistentRead: true }),
  );
  const breakers = new Map<string, StoredBreaker>();
  for (const raw of result.Items ?? []) {
    const item = unmarshall(raw);
    breakers.set(item.sk, { failures: item.failures ?? 0, openedAt: item.openedAt, probeAt: item.probeAt });
  }
  return breakers;
}

/** Marks the probe as out, if the breaker opened and no probe is out since `cooledBefore`; false otherwise. */
export function claimBreakerProbe(identity: string, path: string, now: number, cooledBefore: number): Promise<boolean> {
  return writeIfCondition(() =>
    dynamoClient().send(
      new UpdateItemCommand({
        TableName: tables.state,
        Key: marshall(breakerKey.item(identity, path)),
        UpdateExpression: 'SET probeAt = :now',
        ConditionExpression: 'attribute_exists(openedAt) AND openedAt <= :cooled AND (attribute_not_exists(probeAt) OR probeAt <= :cooled)',
        ExpressionAttributeValues: marshall({ ':now': now, ':cooled': cooledBefore }),
      }),
    ),
  );
}

/** Adds one failure (atomically) and returns the breaker as it is now. */
export async function addBreakerFailure(identity: string, path: string, now: number): Promise<StoredBreaker> {
  const result = await dynamoClient().send(
    new UpdateItemCommand({
      TableName: tables.state,
      Key: marshall(breakerKey.item(identity, path)),
      UpdateExpression: 'ADD failures :one SET lastFailureAt = :now, expiresAt = :ttl',
      ExpressionAttributeValues: marshall({ ':one': 1, ':now': now, ':ttl': Math.floor(now / 1000) + stateTtlSeconds }),
      ReturnValues: 'ALL_NEW',
    }),
  );
  const item = unmarshall(result.Attributes!);
  return { failures: item.failures ?? 0, openedAt: item.openedAt, probeAt: item.probeAt };
}

/** Opens the breaker now, ending any probe. */
export async function openBreaker(identity: string, path: string, now: number): Promise<void> {
  await dynamoClient().send(
    new UpdateItemCommand({ TableName: tables.state, Key: marshall(breakerKey.item(identity, path)), UpdateExpression: 'SET openedAt = :now REMOVE probeAt', ExpressionAttributeValues: marshall({ ':now': now }) }),
  );
}

/** Closes the breaker: its item goes. */
export async function deleteBreaker(identity: string, path: string): Promise<void> {
  await dynamoClient().send(new DeleteItemCommand({ TableName: tables.state, Key: marshall(breakerKey.item(identity, path)) }));
}
