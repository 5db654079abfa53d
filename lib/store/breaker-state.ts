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

/**
 * Where breakers live. The gateway uses the DynamoDB table below; unit tests of the breaker's
 * logic use the in-memory store of `memory/breaker-state.ts`, which keeps the same conditions.
 */
export interface BreakerStateStore {
  /** Every breaker of one config identity, by target path, as of now (never a stale read). */
  read(identity: string): Promise<Map<string, StoredBreaker>>;
  /** Marks the probe as out, if the breaker opened and no probe is out since `cooledBefore`; false otherwise. */
  claimProbe(identity: string, path: string, now: number, cooledBefore: number): Promise<boolean>;
  /** Adds one failure (atomically, creating the breaker if need be) and returns the breaker as it is now. */
  addFailure(identity: string, path: string, now: number): Promise<StoredBreaker>;
  /** Opens the breaker now, ending any probe. */
  open(identity: string, path: string, now: number): Promise<void>;
  /** Closes the breaker: its item goes. */
  delete(identity: string, path: string): Promise<void>;
}

const stateTtlSeconds = 7 * 86_400;

export const dynamoBreakerStore: BreakerStateStore = {
  async read(identity) {
    const result = await dynamoClient().send(
      new QueryCommand({
        TableName: tables.state,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: marshall({ ':pk': breakerKey.partition(identity) }),
        ConsistentRead: true,
      }),
    );
    const breakers = new Map<string, StoredBreaker>();
    for (const raw of result.Items ?? []) {
      const item = unmarshall(raw);
      breakers.set(item.sk, { failures: item.failures ?? 0, openedAt: item.openedAt, probeAt: item.probeAt });
    }
    return breakers;
  },

  claimProbe(identity, path, now, cooledBefore) {
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
  },

  async addFailure(identity, path, now) {
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
  },

  async open(identity, path, now) {
    await dynamoClient().send(
      new UpdateItemCommand({
        TableName: tables.state,
        Key: marshall(breakerKey.item(identity, path)),
        UpdateExpression: 'SET openedAt = :now REMOVE probeAt',
        ExpressionAttributeValues: marshall({ ':now': now }),
      }),
    );
  },

  async delete(identity, path) {
    await dynamoClient().send(new DeleteItemCommand({ TableName: tables.state, Key: marshall(breakerKey.item(identity, path)) }));
  },
};
