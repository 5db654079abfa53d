import { GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { dynamoClient } from './clients';
import { writeIfCondition } from './conditional';
import { rateLimitPolicyKey } from './keys';
import { queryAllNewestFirst } from './newest-first';
import { tables } from './tables';

export type RateLimitType = 'requests' | 'tokens';
export type RateLimitUnit = 'rpm' | 'rph' | 'rpd';
export type PolicyStatus = 'active' | 'archived';

export interface PolicyCondition {
  key: string;
  /** One value, `*` for any request that has the key, or a list of which any may match. */
  value: string | string[];
}

/** A rate-limit policy as stored; times are epoch milliseconds. */
export interface RateLimitPolicyItem {
  id: string;
  workspace_id: string;
  organisation_id: string;
  name?: string;
  type: RateLimitType;
  unit: RateLimitUnit;
  value: number;
  status: PolicyStatus;
  conditions: PolicyCondition[];
  group_by: { key: string }[];
  created_at: number;
  last_updated_at: number;
}

/** Writes a policy: `ifAbsent` for a new id, `ifPresent` to replace one that still exists. False when the condition did not hold. */
export function putRateLimitPolicyItem(item: RateLimitPolicyItem, condition: 'ifAbsent' | 'ifPresent'): Promise<boolean> {
  return writeIfCondition(() =>
    dynamoClient().send(
      new PutItemCommand({
        TableName: tables.control,
        Item: marshall(
          { ...rateLimitPolicyKey.item(item.workspace_id, item.id), gsi1pk: rateLimitPolicyKey.workspaceList(item.workspace_id), gsi1sk: `${String(item.created_at).padStart(15, '0')}#${item.id}`, ...item },
          { removeUndefinedValues: true },
        ),
        ConditionExpression: condition === 'ifAbsent' ? 'attribute_not_exists(pk)' : 'attribute_exists(pk)',
      }),
    ),
  );
}

export async function getRateLimitPolicyItem(workspaceId: string, id: string): Promise<RateLimitPolicyItem | undefined> {
  const result = await dynamoClient().send(new GetItemCommand({ TableName: tables.control, Key: marshall(rateLimitPolicyKey.item(workspaceId, id)), ConsistentRead: true }));
  return result.Item ? strip(unmarshall(result.Item)) : undefined;
}

/**
 * Every policy of a workspace, newest first. A workspace holds tens of policies, not thousands, so
 * filters and pages are applied to the whole list, and `total` is exact.
 */
export async function listRateLimitPolicyItems(workspaceId: string): Promise<RateLimitPolicyItem[]> {
  return (await queryAllNewestFirst(tables.control, rateLimitPolicyKey.workspaceList(workspaceId))).map(strip);
}

function strip(item: Record<string, unknown>): RateLimitPolicyItem {
  const { pk: _pk, sk: _sk, gsi1pk: _gsi1pk, gsi1sk: _gsi1sk, ...fields } = item;
  return fields as unknown as RateLimitPolicyItem;
}
