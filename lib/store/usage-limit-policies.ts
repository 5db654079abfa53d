import { GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { dynamoClient } from './clients';
import { writeIfCondition } from './conditional';
import { usageLimitPolicyKey } from './keys';
import { queryAllNewestFirst } from './newest-first';
import type { PolicyCondition, PolicyStatus } from './rate-limit-policies';
import { tables } from './tables';

export type UsageLimitType = 'cost' | 'tokens';
export type PeriodicReset = 'weekly' | 'monthly';

/** A usage-limit policy (budget) as stored; times are epoch milliseconds, `credit_limit` is USD or tokens. */
export interface UsageLimitPolicyItem {
  id: string;
  workspace_id: string;
  organisation_id: string;
  name: string;
  type: UsageLimitType;
  credit_limit: number;
  alert_threshold?: number;
  periodic_reset?: PeriodicReset;
  periodic_reset_days?: number;
  status: PolicyStatus;
  conditions: PolicyCondition[];
  group_by: { key: string }[];
  created_at: number;
  last_updated_at: number;
}

/** Writes a policy: `ifAbsent` for a new id, `ifPresent` to replace one that still exists. False when the condition did not hold. */
export function putUsageLimitPolicyItem(item: UsageLimitPolicyItem, condition: 'ifAbsent' | 'ifPresent'): Promise<boolean> {
  return writeIfCondition(() =>
    dynamoClient().send(
      new PutItemCommand({
        TableName: tables.control,
        Item: marshall(
          { ...usageLimitPolicyKey.item(item.workspace_id, item.id), gsi1pk: usageLimitPolicyKey.workspaceList(item.workspace_id), gsi1sk: `${String(item.created_at).padStart(15, '0')}#${item.id}`, ...item },
          { removeUndefinedValues: true },
        ),
        ConditionExpression: condition === 'ifAbsent' ? 'attribute_not_exists(pk)' : 'attribute_exists(pk)',
      }),
    ),
  );
}

export async function getUsageLimitPolicyItem(workspaceId: string, id: string): Promise<UsageLimitPolicyItem | undefined> {
  const result = await dynamoClient().send(new GetItemCommand({ TableName: tables.control, Key: marshall(usageLimitPolicyKey.item(workspaceId, id)), ConsistentRead: true }));
  return result.Item ? strip(unmarshall(result.Item)) : undefined;
}

/** Every budget of a workspace, newest first (tens per workspace: filtered and paged in memory). */
export async function listUsageLimitPolicyItems(workspaceId: string): Promise<UsageLimitPolicyItem[]> {
  return (await queryAllNewestFirst(tables.control, usageLimitPolicyKey.workspaceList(workspaceId))).map(strip);
}

function strip(item: Record<string, unknown>): UsageLimitPolicyItem {
  const { pk: _pk, sk: _sk, gsi1pk: _gsi1pk, gsi1sk: _gsi1sk, ...fields } = item;
  return fields as unknown as UsageLimitPolicyItem;
}
