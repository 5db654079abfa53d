/**
 * DynamoDB writes per request of the `rate-limited` scenario: the counter items of its policy count
 * the conditional writes that built them (`writes`) and the requests they reserved (`n`), so the
 * ratio is read from the table after the runs, with no proxy slowing every other scenario down.
 * `n` includes reservations a process had not spent when a window closed (at most one chunk per
 * process and window), so this slightly understates writes per admitted request.
 */
import path from 'node:path';
import { DynamoDBClient, ScanCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { loadServerlessConfig } from '../lib/local/template/serverless-config';
import type { Env } from './environment';
import { repoRoot } from './lib/services';
import { rateLimitedPolicyId } from './scenarios/rate-limited';

export interface RateLimitWrites {
  /** Conditional writes made on the policy's counters. */
  writes: number;
  /** Requests those writes reserved. */
  reserved: number;
  writesPerRequest: number;
}

export async function measureRateLimitWrites(env: Env): Promise<RateLimitWrites | undefined> {
  const policyId = rateLimitedPolicyId();
  if (!policyId) return undefined;
  const config = loadServerlessConfig({ file: path.join(repoRoot, 'serverless.yml'), stage: 'local', region: 'us-east-1' });
  const table = (config.resources.StateTable?.Properties as { TableName?: string } | undefined)?.TableName;
  if (!table) return undefined;
  const client = new DynamoDBClient({
    endpoint: env.emulators.endpoints.dynamodb,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  let writes = 0;
  let reserved = 0;
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await client.send(
      new ScanCommand({
        TableName: table,
        FilterExpression: 'begins_with(pk, :prefix)',
        ExpressionAttributeValues: { ':prefix': { S: `RL#${policyId}#` } },
        ExclusiveStartKey: start,
      }),
    );
    for (const item of page.Items ?? []) {
      writes += Number(item.writes?.N ?? 0);
      reserved += Number(item.n?.N ?? 0);
    }
    start = page.LastEvaluatedKey;
  } while (start);
  client.destroy();
  return reserved > 0 ? { writes, reserved, writesPerRequest: writes / reserved } : undefined;
}
