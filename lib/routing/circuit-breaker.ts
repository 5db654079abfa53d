import { DeleteItemCommand, QueryCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import type { CircuitBreakerSettings } from '../config/types';
import { dynamoClient } from '../store/clients';
import { tables } from '../store/tables';

/**
 * Circuit breakers shared by every Lambda container: one item per (config identity, target path)
 * in the state table, with absolute timestamps. A target opens after `failure_threshold` failures,
 * lets one probe through once `cooldown_interval` has passed (half-open), and closes on a success.
 * Reads are one Query per config identity, cached for a second.
 */
export interface BreakerState {
  failures: number;
  /** Epoch ms when the breaker opened; absent while closed. */
  openedAt?: number;
  /** Epoch ms when a half-open probe was let through. */
  probeAt?: number;
}

export type BreakerVerdict = 'closed' | 'open' | 'half-open';

const readCacheMs = 1_000;
const stateTtlSeconds = 7 * 86_400;
const cache = new Map<string, { states: Map<string, BreakerState>; expiresAt: number }>();

const partition = (identity: string) => `CB#${identity}`;

/** The breaker states of one config, by target path. */
export async function loadBreakerStates(identity: string, now = Date.now()): Promise<Map<string, BreakerState>> {
  const cached = cache.get(identity);
  if (cached && cached.expiresAt > now) return cached.states;
  const result = await dynamoClient().send(
    new QueryCommand({ TableName: tables.state, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: marshall({ ':pk': partition(identity) }), ConsistentRead: true }),
  );
  const states = new Map<string, BreakerState>();
  for (const raw of result.Items ?? []) {
    const item = unmarshall(raw);
    states.set(item.sk, { failures: item.failures ?? 0, openedAt: item.openedAt, probeAt: item.probeAt });
  }
  cache.set(identity, { states, expiresAt: now + readCacheMs });
  if (cache.size > 5_000) cache.delete(cache.keys().next().value!);
  return states;
}

export function verdict(state: BreakerState | undefined, settings: CircuitBreakerSettings, now = Date.now()): BreakerVerdict {
  if (!state?.openedAt) return 'closed';
  if (now < state.openedAt + settings.cooldown_interval) return 'open';
  // One probe per cooldown: while a probe is out, the target stays open to everyone else.
  if (state.probeAt && now < state.probeAt + settings.cooldown_interval) return 'open';
  return 'half-open';
}

/** Claims the half-open probe; false when another request claimed it first. */
export async function claimProbe(identity: string, path: string, settings: CircuitBreakerSettings, now = Date.now()): Promise<boolean> {
  try {
    await dynamoClient().send(
      new UpdateItemCommand({
        TableName: tables.state,
        Key: marshall({ pk: partition(identity), sk: path }),
        UpdateExpression: 'SET probeAt = :now',
        ConditionExpression: 'attribute_exists(openedAt) AND openedAt <= :cooled AND (attribute_not_exists(probeAt) OR probeAt <= :cooled)',
        ExpressionAttributeValues: marshall({ ':now': now, ':cooled': now - settings.cooldown_interval }),
      }),
    );
    forget(identity);
    return true;
  } catch (error) {
    if ((error as Error).name === 'ConditionalCheckFailedException') return false;
    throw error;
  }
}

/** Whether a finished attempt counts as a failure for the breaker. */
export function isBreakerFailure(settings: CircuitBreakerSettings, status: number, network: boolean): boolean {
  if (network || status === 408) return true;
  return settings.failure_status_codes ? settings.failure_status_codes.includes(status) : status > 500;
}

/** Counts a failure; opens (or re-opens, after a failed probe) once the threshold is reached. */
export async function recordFailure(identity: string, path: string, settings: CircuitBreakerSettings, now = Date.now()): Promise<void> {
  const key = marshall({ pk: partition(identity), sk: path });
  const result = await dynamoClient().send(
    new UpdateItemCommand({
      TableName: tables.state,
      Key: key,
      UpdateExpression: 'ADD failures :one SET lastFailureAt = :now, expiresAt = :ttl',
      ExpressionAttributeValues: marshall({ ':one': 1, ':now': now, ':ttl': Math.floor(now / 1000) + stateTtlSeconds }),
      ReturnValues: 'ALL_NEW',
    }),
  );
  const state = unmarshall(result.Attributes!);
  const probeFailed = state.probeAt !== undefined;
  if (state.failures >= settings.failure_threshold && (!state.openedAt || probeFailed)) {
    await dynamoClient().send(
      new UpdateItemCommand({ TableName: tables.state, Key: key, UpdateExpression: 'SET openedAt = :now REMOVE probeAt', ExpressionAttributeValues: marshall({ ':now': now }) }),
    );
  }
  forget(identity);
}

/** A success closes the breaker (only written when there was something to clear). */
export async function recordSuccess(identity: string, path: string): Promise<void> {
  await dynamoClient().send(new DeleteItemCommand({ TableName: tables.state, Key: marshall({ pk: partition(identity), sk: path }) }));
  forget(identity);
}

function forget(identity: string): void {
  cache.delete(identity);
}
