import { BatchGetItemCommand, DeleteItemCommand, GetItemCommand, PutItemCommand, UpdateItemCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { sleep } from '../core/time';
import { deleteItemsUnder, markHeadDeleting } from './batch-write';
import { dynamoClient } from './clients';
import { writeIfCondition } from './conditional';
import { savedConfigKey } from './keys';
import { queryNewestFirst, type Page } from './newest-first';
import { tables } from './tables';

/**
 * A saved config's head: the source of truth, holding the latest version's sealed body itself.
 * `deleting_at` is set while a delete runs (the head has then left the list already).
 */
export interface ConfigHead {
  id: string;
  workspace_id: string;
  name: string;
  latest_version: number;
  /** The sealed config body (an EncryptedBlob). */
  config: unknown;
  created_at: number;
  updated_at: number;
  deleting_at?: number;
}

/** One stored version of a saved config. */
export interface ConfigVersion {
  version: number;
  name: string;
  config: unknown;
  created_at: number;
}

/** A head in a list: no body. */
export type ConfigHeadSummary = Pick<ConfigHead, 'id' | 'name' | 'latest_version' | 'created_at' | 'updated_at'>;

/** Writes a new config's head (listed at once). */
export async function createConfigHead(head: ConfigHead): Promise<void> {
  await dynamoClient().send(
    new PutItemCommand({
      TableName: tables.control,
      Item: marshall({ ...savedConfigKey.head(head.workspace_id, head.id), gsi1pk: savedConfigKey.workspaceList(head.workspace_id), gsi1sk: head.id, ...head }),
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
}

/** The head, unless there is none or a delete has started on it. */
export async function readConfigHead(workspaceId: string, id: string, consistent: boolean): Promise<ConfigHead | undefined> {
  const result = await dynamoClient().send(
    new GetItemCommand({ TableName: tables.control, Key: marshall(savedConfigKey.head(workspaceId, id)), ConsistentRead: consistent }),
  );
  if (!result.Item) return undefined;
  const head = unmarshall(result.Item) as ConfigHead;
  return head.deleting_at === undefined ? head : undefined;
}

/** The head and one version's item in one round trip (BatchGetItem). */
export async function readConfigHeadAndVersion(
  workspaceId: string,
  id: string,
  version: number,
  consistent: boolean,
): Promise<{ head?: ConfigHead; version?: ConfigVersion }> {
  let request: Record<string, { Keys: Record<string, AttributeValue>[]; ConsistentRead: boolean }> | undefined = {
    [tables.control]: {
      Keys: [marshall(savedConfigKey.head(workspaceId, id)), marshall(savedConfigKey.version(workspaceId, id, version))],
      ConsistentRead: consistent,
    },
  };
  let head: (ConfigHead & { sk?: string }) | undefined;
  let item: ConfigVersion | undefined;
  for (let attempt = 0; request && Object.keys(request).length > 0; attempt++) {
    if (attempt > 0) await sleep(Math.min(500, 25 * 2 ** attempt));
    if (attempt > 6) throw new Error('DynamoDB kept returning unprocessed keys for a saved config.');
    const result = await dynamoClient().send(new BatchGetItemCommand({ RequestItems: request }));
    for (const raw of result.Responses?.[tables.control] ?? []) {
      const found = unmarshall(raw);
      if (found.sk === savedConfigKey.headSort) head = found as ConfigHead;
      else item = found as ConfigVersion;
    }
    request = result.UnprocessedKeys as typeof request;
  }
  return { head: head && head.deleting_at === undefined ? head : undefined, version: item };
}

/** Stores a version's item; with `onlyIfAbsent`, an existing one is left as it is. */
export async function putConfigVersion(workspaceId: string, id: string, version: ConfigVersion, options: { onlyIfAbsent?: boolean } = {}): Promise<void> {
  await writeIfCondition(() =>
    dynamoClient().send(
      new PutItemCommand({
        TableName: tables.control,
        Item: marshall({ ...savedConfigKey.version(workspaceId, id, version.version), ...version }),
        ConditionExpression: options.onlyIfAbsent ? 'attribute_not_exists(pk)' : undefined,
      }),
    ),
  );
}

/**
 * Moves the head to `next` if it is still at `current` and no delete has started; false otherwise
 * (another update or a delete won).
 */
export function advanceConfigHead(
  workspaceId: string,
  id: string,
  change: { current: number; next: number; name: string; config: unknown; updatedAt: number },
): Promise<boolean> {
  return writeIfCondition(() =>
    dynamoClient().send(
      new UpdateItemCommand({
        TableName: tables.control,
        Key: marshall(savedConfigKey.head(workspaceId, id)),
        UpdateExpression: 'SET latest_version = :next, config = :config, #name = :name, updated_at = :now',
        ConditionExpression: 'latest_version = :current AND attribute_not_exists(deleting_at)',
        ExpressionAttributeNames: { '#name': 'name' },
        ExpressionAttributeValues: marshall({
          ':next': change.next,
          ':config': change.config,
          ':name': change.name,
          ':now': change.updatedAt,
          ':current': change.current,
        }),
      }),
    ),
  );
}

/** The workspace's heads, newest first, without their bodies. */
export async function listConfigHeads(workspaceId: string, options: { limit: number; after?: string }): Promise<Page<ConfigHeadSummary>> {
  const page = await queryNewestFirst({
    table: tables.control,
    index: 'gsi1',
    partition: savedConfigKey.workspaceList(workspaceId),
    projection: { expression: 'id, #name, latest_version, created_at, updated_at', names: { '#name': 'name' } },
    ...options,
  });
  return { data: page.items as ConfigHeadSummary[], has_more: page.has_more };
}

/**
 * Deletes a config: first marks the head (reads then treat it as gone, updates refuse it, and it
 * leaves the list), then removes every version and the head. Returns the head as it was before the
 * mark, or undefined when there was none. A delete that an interrupted one had started finishes it.
 */
export async function deleteConfigItems(workspaceId: string, id: string, now: number): Promise<ConfigHead | undefined> {
  const head = savedConfigKey.head(workspaceId, id);
  const raw = await markHeadDeleting(tables.control, head, now);
  const old = raw && (unmarshall(raw) as ConfigHead);
  if (!old) return undefined;
  await deleteItemsUnder(tables.control, head.pk, savedConfigKey.versionPrefix, 'saved-config versions to delete');
  await dynamoClient().send(new DeleteItemCommand({ TableName: tables.control, Key: marshall(head) }));
  return old;
}
