import { DeleteItemCommand, GetItemCommand, PutItemCommand, QueryCommand, UpdateItemCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { deleteItemsUnder, markHeadDeleting } from './batch-write';
import { dynamoClient } from './clients';
import { writeIfCondition } from './conditional';
import { promptKey, type PromptKind } from './keys';
import { queryNewestFirst, type Page } from './newest-first';
import { tables } from './tables';

export type { PromptKind } from './keys';

/**
 * A prompt's or partial's head. Every version, the latest included, has its own item, written
 * before the head moves to it, so a head never points at a version that is not stored.
 */
export interface TemplateHead {
  id: string;
  workspace_id: string;
  slug: string;
  name: string;
  latest_version: number;
  published_version: number;
  collection_id?: string;
  created_at: number;
  updated_at: number;
  deleting_at?: number;
}

/** One stored version: its fields as the route saved them. */
export interface TemplateVersion {
  version: number;
  fields: Record<string, unknown>;
  created_at: number;
}

const marshallOptions = { removeUndefinedValues: true, convertClassInstanceToMap: false };

function strip<T>(item: Record<string, AttributeValue>): T {
  return withoutKeys(unmarshall(item));
}

function withoutKeys<T>(item: Record<string, unknown>): T {
  const { pk: _pk, sk: _sk, gsi1pk: _gsi1pk, gsi1sk: _gsi1sk, ...fields } = item;
  return fields as T;
}

/** Points `slug` at `id`; false when the slug is taken. */
export function claimTemplateSlug(kind: PromptKind, workspaceId: string, slug: string, id: string): Promise<boolean> {
  return writeIfCondition(() =>
    dynamoClient().send(
      new PutItemCommand({
        TableName: tables.control,
        Item: marshall({ ...promptKey.slug(kind, workspaceId, slug), id }),
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    ),
  );
}

export async function releaseTemplateSlug(kind: PromptKind, workspaceId: string, slug: string): Promise<void> {
  await dynamoClient().send(new DeleteItemCommand({ TableName: tables.control, Key: marshall(promptKey.slug(kind, workspaceId, slug)) }));
}

/** The id a slug points at. */
export async function readTemplateSlug(kind: PromptKind, workspaceId: string, slug: string, consistent: boolean): Promise<string | undefined> {
  const result = await dynamoClient().send(
    new GetItemCommand({ TableName: tables.control, Key: marshall(promptKey.slug(kind, workspaceId, slug)), ConsistentRead: consistent }),
  );
  return result.Item ? (unmarshall(result.Item).id as string) : undefined;
}

/** Writes a version's item; false when that version number is taken already. */
export function putTemplateVersion(kind: PromptKind, workspaceId: string, id: string, version: TemplateVersion): Promise<boolean> {
  return writeIfCondition(() =>
    dynamoClient().send(
      new PutItemCommand({
        TableName: tables.control,
        Item: marshall({ ...promptKey.version(kind, workspaceId, id, version.version), ...version }, marshallOptions),
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    ),
  );
}

/** Writes a new head (listed at once). */
export async function createTemplateHead(kind: PromptKind, head: TemplateHead): Promise<void> {
  await dynamoClient().send(
    new PutItemCommand({
      TableName: tables.control,
      Item: marshall(
        { ...promptKey.head(kind, head.workspace_id, head.id), gsi1pk: promptKey.workspaceList(kind, head.workspace_id), gsi1sk: head.id, ...head },
        marshallOptions,
      ),
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
}

/** The head, unless there is none or a delete has started on it. */
export async function readTemplateHead(kind: PromptKind, workspaceId: string, id: string, consistent: boolean): Promise<TemplateHead | undefined> {
  const result = await dynamoClient().send(
    new GetItemCommand({ TableName: tables.control, Key: marshall(promptKey.head(kind, workspaceId, id)), ConsistentRead: consistent }),
  );
  if (!result.Item) return undefined;
  const head = strip<TemplateHead>(result.Item);
  return head.deleting_at === undefined ? head : undefined;
}

export async function readTemplateVersion(
  kind: PromptKind,
  workspaceId: string,
  id: string,
  version: number,
  consistent: boolean,
): Promise<TemplateVersion | undefined> {
  const result = await dynamoClient().send(
    new GetItemCommand({ TableName: tables.control, Key: marshall(promptKey.version(kind, workspaceId, id, version)), ConsistentRead: consistent }),
  );
  return result.Item ? strip<TemplateVersion>(result.Item) : undefined;
}

/** Every version of one prompt or partial, newest first. */
export async function listTemplateVersions(kind: PromptKind, workspaceId: string, id: string): Promise<TemplateVersion[]> {
  const versions: TemplateVersion[] = [];
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await dynamoClient().send(
      new QueryCommand({
        TableName: tables.control,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :v)',
        ExpressionAttributeValues: marshall({ ':pk': promptKey.partition(kind, workspaceId, id), ':v': promptKey.versionPrefix }),
        ScanIndexForward: false,
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    versions.push(...(page.Items ?? []).map((item) => strip<TemplateVersion>(item)));
    start = page.LastEvaluatedKey;
  } while (start);
  return versions;
}

/** Moves the head forward to version `next` (never back); false when it is gone or already past it. */
export function advanceTemplateHead(kind: PromptKind, workspaceId: string, id: string, next: number, updatedAt: number): Promise<boolean> {
  return writeIfCondition(() =>
    dynamoClient().send(
      new UpdateItemCommand({
        TableName: tables.control,
        Key: marshall(promptKey.head(kind, workspaceId, id)),
        UpdateExpression: 'SET latest_version = :next, updated_at = :now',
        ConditionExpression: 'attribute_exists(pk) AND latest_version < :next AND attribute_not_exists(deleting_at)',
        ExpressionAttributeValues: marshall({ ':next': next, ':now': updatedAt }),
      }),
    ),
  );
}

/** Publishes an existing version; false when the head is gone or has no such version. */
export function publishTemplateVersion(kind: PromptKind, workspaceId: string, id: string, version: number, updatedAt: number): Promise<boolean> {
  return writeIfCondition(() =>
    dynamoClient().send(
      new UpdateItemCommand({
        TableName: tables.control,
        Key: marshall(promptKey.head(kind, workspaceId, id)),
        UpdateExpression: 'SET published_version = :version, updated_at = :now',
        ConditionExpression: 'attribute_exists(pk) AND latest_version >= :version AND attribute_not_exists(deleting_at)',
        ExpressionAttributeValues: marshall({ ':version': version, ':now': updatedAt }),
      }),
    ),
  );
}

/** A page of the workspace's heads, newest first. */
export async function listTemplateHeads(kind: PromptKind, workspaceId: string, options: { limit: number; after?: string }): Promise<Page<TemplateHead>> {
  const page = await queryNewestFirst({ table: tables.control, index: 'gsi1', partition: promptKey.workspaceList(kind, workspaceId), ...options });
  return { data: page.items.map((item) => withoutKeys<TemplateHead>(item)), has_more: page.has_more };
}

/** How many heads the workspace has (a count of its listing partition, no items read out). */
export async function countTemplateHeads(kind: PromptKind, workspaceId: string): Promise<number> {
  let total = 0;
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await dynamoClient().send(
      new QueryCommand({
        TableName: tables.control,
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :pk',
        ExpressionAttributeValues: marshall({ ':pk': promptKey.workspaceList(kind, workspaceId) }),
        Select: 'COUNT',
        ExclusiveStartKey: start,
      }),
    );
    total += page.Count ?? 0;
    start = page.LastEvaluatedKey;
  } while (start);
  return total;
}

/**
 * Deletes a prompt or partial: marks the head first (reads treat it as gone and it leaves the list),
 * then removes its slug, every version and the head. Returns the head as it was, or undefined.
 */
export async function deleteTemplateItems(kind: PromptKind, workspaceId: string, id: string, now: number): Promise<TemplateHead | undefined> {
  const head = promptKey.head(kind, workspaceId, id);
  const raw = await markHeadDeleting(tables.control, head, now);
  const old = raw && strip<TemplateHead>(raw);
  if (!old) return undefined;
  if ((await readTemplateSlug(kind, workspaceId, old.slug, true)) === id) await releaseTemplateSlug(kind, workspaceId, old.slug);
  await deleteItemsUnder(tables.control, head.pk, promptKey.versionPrefix, 'prompt versions to delete');
  await dynamoClient().send(new DeleteItemCommand({ TableName: tables.control, Key: marshall(head) }));
  return old;
}
