import { DynamoDBClient, GetItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { env } from './gateway-client';
import { stateTable } from './gateway-store';
import { bucketOf } from '../../lib/ratelimit/enforce';

/**
 * Direct access to the shared gateway's state table: to read and age stored breaker state, and to
 * write or read the counters of rate limits and budgets.
 *
 * It has its own client rather than `connectToGatewayStore()`: that rewrites this process's
 * environment, which gateways spawned by the same test file (spawn-gateway.ts) would inherit.
 */
let client: DynamoDBClient | undefined;
export function stateTableClient(): DynamoDBClient {
  client ??= new DynamoDBClient({ endpoint: env().endpoints.dynamodb, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  return client;
}

export async function readBreaker(identity: string, path: string): Promise<Record<string, any> | undefined> {
  const result = await stateTableClient().send(
    new GetItemCommand({ TableName: stateTable, Key: marshall({ pk: `CB#${identity}`, sk: path }), ConsistentRead: true }),
  );
  return result.Item ? unmarshall(result.Item) : undefined;
}

/** Moves a breaker's timestamps back in time, as if `ms` had passed. */
export async function ageBreaker(identity: string, path: string, ms: number): Promise<void> {
  const item = await readBreaker(identity, path);
  if (!item?.openedAt) throw new Error(`breaker ${identity} ${path} is not open`);
  await stateTableClient().send(
    new UpdateItemCommand({
      TableName: stateTable,
      Key: marshall({ pk: `CB#${identity}`, sk: path }),
      UpdateExpression: 'SET openedAt = :opened',
      ExpressionAttributeValues: marshall({ ':opened': item.openedAt - ms }),
    }),
  );
}

/** The bucket a policy grouped by one key keeps `value` in (the gateway's own hash of it). */
export const bucketOfValue = (value: string) => bucketOf(['key'], () => value);
