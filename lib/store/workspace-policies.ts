import { randomUUID } from 'node:crypto';
import { GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { dynamoClient } from './clients';
import { writeIfCondition } from './conditional';
import { queryAllNewestFirst } from './newest-first';
import { tables } from './tables';

export type PolicyStatus = 'active' | 'archived';

export interface PolicyCondition {
  key: string;
  /** One value, `*` for any request that has the key, or a list of which any may match. */
  value: string | string[];
}

/** What every workspace policy (a rate limit, a budget) holds; times are epoch milliseconds. */
export interface WorkspacePolicyItem {
  id: string;
  workspace_id: string;
  organisation_id: string;
  status: PolicyStatus;
  conditions: PolicyCondition[];
  group_by: { key: string }[];
  created_at: number;
  last_updated_at: number;
}

/** The fields a caller sets on a policy of kind T; the rest the store decides. */
export type PolicyFields<T extends WorkspacePolicyItem> = Omit<T, 'id' | 'workspace_id' | 'organisation_id' | 'status' | 'created_at' | 'last_updated_at'>;

/** Where a kind of policy lives in the control table: one item per policy, listed per workspace newest first. */
export interface PolicyKeys {
  item(workspaceId: string, id: string): { pk: string; sk: string };
  workspaceList(workspaceId: string): string;
}

export interface WorkspacePolicyStore<T extends WorkspacePolicyItem> {
  create(owner: { workspaceId: string; organisationId: string }, fields: PolicyFields<T>, now?: number): Promise<T>;
  find(workspaceId: string, id: string): Promise<T | undefined>;
  /**
   * Every policy of a workspace, newest first. A workspace holds tens of policies, not thousands,
   * so filters and pages are applied to the whole list, and `total` is exact.
   */
  list(workspaceId: string): Promise<T[]>;
  /**
   * Applies a change (undefined fields left as they are) to a stored policy; undefined when the
   * workspace has none of that id. `check` may refuse the changed policy by throwing.
   */
  change(workspaceId: string, id: string, change: Partial<T>, check?: (changed: T) => void): Promise<T | undefined>;
}

/** The store of one kind of workspace policy: rate limits and budgets are stored alike. */
export function workspacePolicyStore<T extends WorkspacePolicyItem>(keys: PolicyKeys): WorkspacePolicyStore<T> {
  const put = (item: T, condition: 'ifAbsent' | 'ifPresent') =>
    writeIfCondition(() =>
      dynamoClient().send(
        new PutItemCommand({
          TableName: tables.control,
          Item: marshall(
            {
              ...keys.item(item.workspace_id, item.id),
              gsi1pk: keys.workspaceList(item.workspace_id),
              gsi1sk: `${String(item.created_at).padStart(15, '0')}#${item.id}`,
              ...item,
            },
            { removeUndefinedValues: true },
          ),
          ConditionExpression: condition === 'ifAbsent' ? 'attribute_not_exists(pk)' : 'attribute_exists(pk)',
        }),
      ),
    );
  const strip = (item: Record<string, unknown>): T => {
    const { pk: _pk, sk: _sk, gsi1pk: _gsi1pk, gsi1sk: _gsi1sk, ...fields } = item;
    return fields as unknown as T;
  };
  const find = async (workspaceId: string, id: string) => {
    const result = await dynamoClient().send(
      new GetItemCommand({ TableName: tables.control, Key: marshall(keys.item(workspaceId, id)), ConsistentRead: true }),
    );
    return result.Item ? strip(unmarshall(result.Item)) : undefined;
  };
  return {
    async create(owner, fields, now = Date.now()) {
      const policy = {
        ...fields,
        id: randomUUID(),
        workspace_id: owner.workspaceId,
        organisation_id: owner.organisationId,
        status: 'active',
        created_at: now,
        last_updated_at: now,
      } as T;
      if (!(await put(policy, 'ifAbsent'))) throw new Error(`Policy id ${policy.id} is taken; ids are random, so this should not happen.`);
      return policy;
    },
    find,
    list: async (workspaceId) => (await queryAllNewestFirst(tables.control, keys.workspaceList(workspaceId))).map(strip),
    async change(workspaceId, id, change, check) {
      const current = await find(workspaceId, id);
      if (!current) return undefined;
      const defined = Object.fromEntries(Object.entries(change).filter(([, field]) => field !== undefined));
      const changed: T = { ...current, ...defined, last_updated_at: Date.now() };
      check?.(changed);
      return (await put(changed, 'ifPresent')) ? changed : undefined;
    },
  };
}
